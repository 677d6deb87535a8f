package family

// This file holds calls written call:NAME{key:value,...}, as Gemma 4 and
// FunctionGemma write them: keys bare, strings between a delimiter of the
// family's, other values as JSON writes them.

import "strings"

// keyedCall returns the reader of a call whose strings are between delim;
// a body holds one.
func keyedCall(delim string) callReader {
	return func(body string, _ []Tool, _ bool) ([]Call, bool) {
		r := &litReader{s: body, syn: litSyntax{delim: delim, bareKeys: true}}
		if !r.eat("call:") {
			return nil, false
		}
		name := r.ident("-.")
		if name == "" || !r.eat("{") {
			return nil, false
		}
		var args strings.Builder
		if !r.members(&args, "}", ":") {
			return nil, false
		}
		if r.space(); r.i != len(r.s) {
			return nil, false
		}
		return []Call{{Name: name, Arguments: args.String()}}, true
	}
}

// keyedCallsGrammar is the grammar of keyed calls, each between open and
// close, one after another with nothing between, keys sorted, values
// written in syn.
func keyedCallsGrammar(open, close string, syn valueSyntax) callsGrammar {
	return callsGrammar{call: func(g *grammar, t Tool, _ func([]byte) (string, error)) (string, error) {
		o, err := readObject(t.Parameters)
		if err != nil {
			return "", err
		}
		body, err := g.members(o.sorted(), ",", func(k string) (string, error) {
			v, err := g.valueRule(o.props[k], syn)
			return lit(k+":") + " " + v, err
		})
		if err != nil {
			return "", err
		}
		return lit(open+"call:"+t.Name+"{") + " " + body + " " + lit("}"+close), nil
	}}
}
