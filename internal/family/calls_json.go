package family

// This file holds calls written as JSON: {"name": ..., "arguments": {...}}
// objects (or "parameters", or OpenAI's {"function": {...}} shape), alone
// or in arrays, as Hermes, Qwen, Llama, Mistral, Granite and Phi-4 write
// them; the reader of their bodies and the grammar rule of one call.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// jsonCall is a call as the JSON-writing families write it.
type jsonCall struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
	// Function holds the call in OpenAI's shape,
	// {"type": "function", "function": {...}}.
	Function *jsonCall `json:"function"`
}

// call converts a decoded call, with its arguments compacted; false if it
// names no function or its arguments are not a JSON object.
func (c jsonCall) call() (Call, bool) {
	if c.Function != nil && c.Name == "" {
		return c.Function.call()
	}
	args := c.Arguments
	if args == nil {
		args = c.Parameters
	}
	if c.Name == "" {
		return Call{}, false
	}
	a, ok := compactArgs(args)
	return Call{Name: c.Name, Arguments: a}, ok
}

// compactArgs returns arguments as a compact JSON object; arguments
// written as a JSON string holding the object are unwrapped, and none (or
// null) are {}.
func compactArgs(args json.RawMessage) (string, bool) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return "{}", true
	}
	var text string
	if json.Unmarshal(args, &text) == nil {
		args = json.RawMessage(text)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return "", false
	}
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		return "", false
	}
	return b.String(), true
}

// jsonCalls reads a body of one or more JSON calls, of any names.
func jsonCalls(body string, _ []Tool, cut bool) ([]Call, bool) {
	return decodeJSONCalls(body, nil, cut)
}

// bareJSONCalls reads an answer written as JSON as calls, when every call
// names an offered tool.
func bareJSONCalls(body string, tools []Tool, cut bool) ([]Call, bool) {
	offered := map[string]bool{}
	for _, t := range tools {
		offered[t.Name] = true
	}
	return decodeJSONCalls(body, offered, cut)
}

// decodeJSONCalls reads body as one or more JSON calls: objects or arrays
// of objects, one after another, apart by white space, ";" or ",". Every
// call must name a function (of offered, when offered is not nil), and
// nothing else may follow; but for a body the token limit cut, the value
// it cut, of which the calls of an array that it holds whole are read.
func decodeJSONCalls(body string, offered map[string]bool, cut bool) ([]Call, bool) {
	var calls []Call
	add := func(v json.RawMessage) bool {
		var o jsonCall
		if json.Unmarshal(v, &o) != nil {
			return false
		}
		c, ok := o.call()
		if !ok || offered != nil && !offered[c.Name] {
			return false
		}
		calls = append(calls, c)
		return true
	}
	for {
		dec := json.NewDecoder(strings.NewReader(body))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			if !cut || !errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, false
			}
			// The cut value: an array's whole items are calls.
			dec = json.NewDecoder(strings.NewReader(body))
			if tok, _ := dec.Token(); tok == json.Delim('[') {
				for dec.More() {
					if err := dec.Decode(&v); err != nil {
						if !errors.Is(err, io.ErrUnexpectedEOF) {
							return nil, false
						}
						break
					}
					if !add(v) {
						return nil, false
					}
				}
			}
			return calls, len(calls) > 0
		}
		var items []json.RawMessage
		if v[0] == '[' {
			if json.Unmarshal(v, &items) != nil {
				return nil, false
			}
		} else {
			items = []json.RawMessage{v}
		}
		for _, item := range items {
			if !add(item) {
				return nil, false
			}
		}
		// Skip the separators Llama writes between calls.
		body = strings.TrimLeft(body[dec.InputOffset():], spaces+";,")
		if body == "" {
			return calls, len(calls) > 0
		}
	}
}

// jsonCallRule returns the rule of one call of t written as a JSON object
// {"name": t.Name, argsKey: {...}}, converted by schema.
func jsonCallRule(g *grammar, t Tool, argsKey string, schema func([]byte) (string, error)) (string, error) {
	name, _ := json.Marshal(t.Name)
	key, _ := json.Marshal(argsKey)
	doc := fmt.Sprintf(`{"type":"object","properties":{"name":{"const":%s},%s:%s},"required":["name",%s],"additionalProperties":false}`,
		name, key, toolParams(t), key)
	return g.schema(json.RawMessage(doc), schema)
}

// jsonCallsGrammar returns the callsGrammar.call of a JSON call
// {"name", argsKey} between open and close.
func jsonCallsGrammar(argsKey, open, close string) func(g *grammar, t Tool, schema func([]byte) (string, error)) (string, error) {
	return func(g *grammar, t Tool, schema func([]byte) (string, error)) (string, error) {
		call, err := jsonCallRule(g, t, argsKey, schema)
		if err != nil {
			return "", err
		}
		if open != "" {
			call = lit(open) + " " + call
		}
		if close != "" {
			call += " " + lit(close)
		}
		return call, nil
	}
}

// argsCall returns the rule body of a call written as prefix(t), then its
// arguments as a JSON object converted by schema.
func argsCall(prefix func(t Tool) string, suffix string) func(g *grammar, t Tool, schema func([]byte) (string, error)) (string, error) {
	return func(g *grammar, t Tool, schema func([]byte) (string, error)) (string, error) {
		args, err := g.schema(toolParams(t), schema)
		if err != nil {
			return "", err
		}
		body := lit(prefix(t)) + " " + args
		if suffix != "" {
			body += " " + lit(suffix)
		}
		return body, nil
	}
}
