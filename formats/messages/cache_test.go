package messages

import (
	"errors"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/formats"
)

// TestCachePoint checks the prefix that a request's last cache_control
// breakpoint ends, in the order tools, system, messages, and the
// breakpoints refused with a 400 naming them.
func TestCachePoint(t *testing.T) {
	const cc = `"cache_control":{"type":"ephemeral"}`
	tools := `"tools":[{"name":"a","input_schema":{"type":"object"},` + cc + `},{"name":"b","input_schema":{"type":"object"}}]`
	for _, c := range []struct {
		name, body string
		// want: tools, instructions and the text of the prefix's messages
		tools        int
		instructions string
		texts        []string
		none         bool
	}{
		{name: "none", body: `{"system":"S","messages":[{"role":"user","content":"hi"}]}`, none: true},
		{name: "tool", body: `{` + tools + `,"messages":[{"role":"user","content":"hi"}]}`, tools: 1},
		{name: "system", body: `{` + tools + `,"system":[{"type":"text","text":"A",` + cc + `},{"type":"text","text":"B"}],"messages":[{"role":"user","content":"hi"}]}`,
			tools: 2, instructions: "A"},
		{name: "message block", body: `{"system":"S","messages":[{"role":"user","content":"one"},{"role":"assistant","content":"two"},` +
			`{"role":"user","content":[{"type":"text","text":"x",` + cc + `},{"type":"text","text":"y"}]},{"role":"assistant","content":"z"}]}`,
			instructions: "S", texts: []string{"one", "two", "x"}},
		{name: "the last of several", body: `{"system":[{"type":"text","text":"S",` + cc + `}],"messages":[{"role":"user","content":[{"type":"text","text":"x",` + cc + `}]}]}`,
			instructions: "S", texts: []string{"x"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := Parse([]byte(strings.Replace(c.body, `{`, `{"model":"m",`, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if c.none {
				if req.Cache != nil {
					t.Fatalf("cache point %+v without a breakpoint", req.Cache)
				}
				return
			}
			p := req.Cache
			if p == nil {
				t.Fatal("no cache point")
			}
			var texts []string
			for _, m := range p.Messages {
				for _, part := range m.Content {
					texts = append(texts, part.Text)
				}
			}
			if p.Tools != c.tools || p.Instructions != c.instructions || strings.Join(texts, ",") != strings.Join(c.texts, ",") {
				t.Errorf("cache point: %d tools, instructions %q, messages %q", p.Tools, p.Instructions, texts)
			}
			prefix := req.Prefix(*p)
			if len(prefix.Tools) != c.tools || prefix.Cache != nil || len(prefix.Messages) == 0 && prefix.Instructions == "" {
				t.Errorf("prefix %+v", prefix)
			}
		})
	}
	for body, param := range map[string]string{
		`"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral","ttl":"1h"}}]`:                           "system[0].cache_control.ttl",
		`"system":[{"type":"text","text":"S","cache_control":{"type":"persistent"}}]`:                                     "system[0].cache_control.type",
		`"system":[` + strings.Repeat(`{"type":"text","text":"S",`+cc+`},`, 4) + `{"type":"text","text":"S",` + cc + `}]`: "system[4].cache_control",
	} {
		_, err := Parse([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],` + body + `}`))
		if re := (*formats.RequestError)(nil); !errors.As(err, &re) || re.Param != param {
			t.Errorf("%s: %v, want a 400 naming %s", body, err, param)
		}
	}
}
