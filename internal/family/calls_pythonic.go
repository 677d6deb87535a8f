package family

// This file holds calls written as Python function calls,
// NAME(key=value, ...), as LFM2 (in a list, Python's literals) and Olmo 3
// (one a line, values as JSON) write them.

import (
	"encoding/json"
	"strings"
)

// pythonCalls returns the reader of calls separated by commas or new
// lines and, when bracketed, in a list: [a(x=1), b()]. In a cut body, the
// calls complete before the cut are those of its longest start that
// reads, once closed after a ")".
func pythonCalls(bracketed bool) callReader {
	read := readPythonCalls(bracketed)
	return func(body string, tools []Tool, cut bool) ([]Call, bool) {
		calls, ok := read(body)
		if ok || !cut {
			return calls, ok
		}
		for i := strings.LastIndexByte(body, ')'); i >= 0; i = strings.LastIndexByte(body[:i], ')') {
			start := body[:i+1]
			if bracketed {
				start += "]"
			}
			if calls, ok := read(start); ok {
				return calls, true
			}
		}
		return nil, false
	}
}

// readPythonCalls returns the reader of whole calls for pythonCalls.
func readPythonCalls(bracketed bool) func(body string) ([]Call, bool) {
	return func(body string) ([]Call, bool) {
		r := &litReader{s: body, syn: litSyntax{python: true}}
		if bracketed && !r.eat("[") {
			return nil, false
		}
		var calls []Call
		for {
			r.space()
			if bracketed && r.eat("]") || !bracketed && r.i == len(r.s) {
				break
			}
			if len(calls) > 0 {
				r.eat(",")
			}
			name := r.ident("-.")
			if name == "" || !r.eat("(") {
				return nil, false
			}
			var args strings.Builder
			if !r.members(&args, ")", "=") {
				return nil, false
			}
			calls = append(calls, Call{Name: name, Arguments: args.String()})
		}
		if r.space(); r.i != len(r.s) || len(calls) == 0 {
			return nil, false
		}
		return calls, true
	}
}

// pythonCall returns the rule body of a call NAME(key=value, ...), keys
// sorted, each value's rule made by value.
func pythonCall(value func(g *grammar, schema json.RawMessage, convert func([]byte) (string, error)) (string, error)) func(*grammar, Tool, func([]byte) (string, error)) (string, error) {
	return func(g *grammar, t Tool, convert func([]byte) (string, error)) (string, error) {
		o, err := readObject(t.Parameters)
		if err != nil {
			return "", err
		}
		body, err := g.members(o.sorted(), ", ", func(k string) (string, error) {
			v, err := value(g, o.props[k], convert)
			return lit(k+"=") + " " + v, err
		})
		if err != nil {
			return "", err
		}
		return lit(t.Name+"(") + " " + body + ` ")"`, nil
	}
}
