package messages

import (
	"fmt"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/wire"
)

// maxBreakpoints is the most cache_control breakpoints a request may
// hold, as in the Anthropic API.
const maxBreakpoints = 4

// CacheControl is a cache breakpoint, {type: ephemeral, ttl}, on a tool,
// a system block or a content block: the prompt up to and including what
// it marks, in the order tools, system, messages, is a prefix the client
// asks to be cached (formats.CachePoint). The engine's prefix cache
// keeps every prompt for 5 minutes, breakpoint or not; what a breakpoint
// changes is the usage: of the prompt tokens not read from the cache,
// those up to the last breakpoint count as cache_creation_input_tokens
// and the rest as input_tokens. ttl is 5m or absent: 1h is refused, since
// the cache keeps nothing that long.
type CacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitzero"`
}

// check validates a breakpoint at path p.
func (c *CacheControl) check(p string) error {
	if c.Type != "ephemeral" {
		return formats.Invalid(p+".type", "%s.type must be ephemeral, got %q", p, c.Type)
	}
	switch c.TTL {
	case "", "5m":
	case "1h":
		return formats.Invalid(p+".ttl", "%s.ttl 1h is not supported: the prefix cache keeps a prompt for 5 minutes; send 5m or leave it out", p)
	default:
		return formats.Invalid(p+".ttl", "%s.ttl must be 5m, got %q", p, c.TTL)
	}
	return nil
}

// cachePoint returns the prefix that r's last breakpoint ends, out being
// r's canonical request, or nil when r has none. It fails on an invalid
// breakpoint or more than maxBreakpoints. A breakpoint inside a
// tool_result's content marks the tool_result block.
func (r *Request) cachePoint(out formats.Request) (*formats.CachePoint, error) {
	marks := 0
	mark := func(p string, c *CacheControl) (bool, error) {
		if c == nil {
			return false, nil
		}
		if marks++; marks > maxBreakpoints {
			return false, formats.Invalid(p, "%s: a request may hold at most %d cache_control breakpoints", p, maxBreakpoints)
		}
		return true, c.check(p)
	}
	var point *formats.CachePoint
	tools := 0
	for i, t := range r.Tools {
		if !t.isWebSearch() {
			tools++
		}
		if ok, err := mark(fmt.Sprintf("tools[%d].cache_control", i), t.CacheControl); err != nil {
			return nil, err
		} else if ok {
			point = &formats.CachePoint{Tools: tools}
		}
	}
	for i, b := range r.System.Blocks {
		if ok, err := mark(fmt.Sprintf("system[%d].cache_control", i), b.CacheControl); err != nil {
			return nil, err
		} else if ok {
			var texts []string
			for _, b := range r.System.Blocks[:i+1] {
				texts = append(texts, b.Text)
			}
			point = &formats.CachePoint{Tools: len(out.Tools), Instructions: wire.JoinLines(texts)}
		}
	}
	at, in := -1, -1 // the last marked message and block
	for i, m := range r.Messages {
		for j, b := range m.Content.Blocks {
			p := fmt.Sprintf("messages[%d].content[%d]", i, j)
			ok, err := mark(p+".cache_control", b.CacheControl)
			if err != nil {
				return nil, err
			}
			if b.Type == "tool_result" && b.Content != nil {
				for k, c := range b.Content.Blocks {
					nested, err := mark(fmt.Sprintf("%s.content[%d].cache_control", p, k), c.CacheControl)
					if err != nil {
						return nil, err
					}
					ok = ok || nested
				}
			}
			if ok {
				at, in = i, j
			}
		}
	}
	if at < 0 {
		return point, nil
	}
	point = &formats.CachePoint{Tools: len(out.Tools), Instructions: out.Instructions}
	for i, m := range r.Messages[:at+1] {
		if i == at {
			m.Content.Blocks = m.Content.Blocks[:in+1]
		}
		msgs, err := m.canonical(fmt.Sprintf("messages[%d]", i))
		if err != nil {
			return nil, err
		}
		point.Messages = append(point.Messages, msgs...)
	}
	formats.NameToolResults(point.Messages)
	return point, nil
}
