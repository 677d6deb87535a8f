package jinja

import (
	"fmt"
	"strings"
)

// Template is a parsed template. It is immutable: any number of goroutines
// may call Render on the same Template concurrently.
type Template struct {
	body []node
}

// Error is a template syntax or runtime error. Line is the 1-based source
// line (0 when unknown). Syntax is true for errors found by Parse. Raised is
// true when the template itself failed by calling raise_exception, whose
// argument is then the Message: such errors mean the input is one the
// template rejects (for example an unsupported order of roles), not a fault
// of the engine. An Error is not modified after it is returned.
type Error struct {
	Line    int
	Message string
	Syntax  bool
	Raised  bool
}

func (e *Error) Error() string {
	kind := "jinja: "
	if e.Syntax {
		kind = "jinja: syntax error: "
	}
	if e.Line > 0 {
		return fmt.Sprintf("%sline %d: %s", kind, e.Line, e.Message)
	}
	return kind + e.Message
}

func newSyntaxError(line int, format string, args ...any) *Error {
	return &Error{Line: line, Message: fmt.Sprintf(format, args...), Syntax: true}
}

// Parse parses Jinja2 template source, with the lexer configured as
// Hugging Face chat templates expect (trim_blocks and lstrip_blocks on, one
// trailing newline dropped). Syntax errors are *Error values that carry the
// line number.
func Parse(source string) (t *Template, err error) {
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, &Error{Message: fmt.Sprintf("internal error while parsing: %v", p)}
		}
	}()
	toks, err := tokenize(source)
	if err != nil {
		return nil, err
	}
	body, err := parseTemplate(toks)
	if err != nil {
		return nil, err
	}
	return &Template{body: body}, nil
}

// Uses reports whether the template reads the variable name anywhere,
// its macros included: as a name of its own, not a field of another
// value. A template that uses it may still not read it on every path.
func (t *Template) Uses(name string) bool { return names(t.body, true, name)[name] }

// Render renders the template with the given variables and returns the
// output, which is byte-identical to Python Jinja2 3.1 in Hugging Face's
// chat-template sandbox for everything the package supports.
//
// Values may be nil, bool, any Go integer or float type, string, []any (or
// any slice), map[string]any (or any map with string keys), *Map, and Func.
// A map[string]any iterates, renders and serializes in sorted key order;
// use *Map (or ParseJSON) where the caller's key order matters. Variables
// shadow the built-in globals range, dict, namespace, cycler, joiner,
// raise_exception and strftime_now; pass a Func as "strftime_now" to fix
// the clock. Render does not modify vars.
//
// Render never panics: failures, including exceeding the limits on steps,
// output size and recursion that stop runaway templates, are returned as
// errors (usually *Error).
func (t *Template) Render(vars map[string]any) (out string, err error) {
	r := &renderer{out: &strings.Builder{}, globals: make(map[string]any, len(vars))}
	defer func() {
		if p := recover(); p != nil {
			out, err = "", &Error{Message: fmt.Sprintf("internal error while rendering: %v", p)}
		}
	}()
	for k, v := range vars {
		n, err := normalize(v, 0)
		if err != nil {
			return "", fmt.Errorf("jinja: variable %q: %w", k, err)
		}
		r.globals[k] = n
	}
	if _, err := r.execBody(t.body, newScope(nil)); err != nil {
		return "", err
	}
	return r.out.String(), nil
}
