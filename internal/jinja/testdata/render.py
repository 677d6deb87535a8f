#!/usr/bin/env python3
"""Reference renderer for the golden tests of package jinja.

Reads a job from stdin, {"now": ISO time, "templates": {name: source},
"fixtures": {name: vars}}, renders every template with every fixture in the
environment of Hugging Face transformers' apply_chat_template (with its
{% generation %} tag), and writes
{template: {fixture: {"output": str} | {"error": str, "raised": bool}}} to
stdout. A job {"now": ..., "cases": [{"template": source, "vars": vars}]}
renders each case once and writes a list of those results. Run by `go test ./internal/jinja -run Golden -update`.
"""
import json
import sys
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.exceptions import TemplateError
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class Raised(TemplateError):
    pass


class Generation(Extension):
    """{% generation %}...{% endgeneration %} as transformers' AssistantTracker
    renders it when no assistant mask is requested: a call block whose body
    is output unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        call = self.call_method("_generation_support")
        return nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _generation_support(self, caller):
        return caller()


def main():
    if jinja2.__version__ != "3.1.6":
        sys.exit(f"render.py: need jinja2 3.1.6, have {jinja2.__version__}")
    job = json.load(sys.stdin)
    now = datetime.fromisoformat(job["now"])

    def raise_exception(message):
        raise Raised(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return now.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now

    if "cases" in job:
        json.dump([render_case(env, c) for c in job["cases"]], sys.stdout, ensure_ascii=False)
        return

    out = {}
    for tname, source in job["templates"].items():
        results = {}
        try:
            template = env.from_string(source)
        except Exception as e:  # a syntax error fails every fixture
            template = None
            err = f"{type(e).__name__}: {e}"
        for fname, variables in job["fixtures"].items():
            if template is None:
                results[fname] = {"error": err, "raised": False}
                continue
            try:
                results[fname] = {"output": template.render(**variables)}
            except Raised as e:
                results[fname] = {"error": str(e), "raised": True}
            except Exception as e:
                results[fname] = {"error": f"{type(e).__name__}: {e}", "raised": False}
        out[tname] = results
    json.dump(out, sys.stdout, ensure_ascii=False)


def render_case(env, case):
    try:
        return {"output": env.from_string(case["template"]).render(**case["vars"])}
    except Raised as e:
        return {"error": str(e), "raised": True}
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}", "raised": False}


if __name__ == "__main__":
    main()
