package inference

import (
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/family"
)

// The engine gives each call a family's parser reads an id of its own.
func TestToolCallIDs(t *testing.T) {
	calls := toolCalls([]family.Call{{Name: "a", Arguments: "{}"}, {Name: "b", Arguments: `{"x":1}`}})
	if len(calls) != 2 || calls[0].Name != "a" || calls[1].Arguments != `{"x":1}` {
		t.Fatalf("calls %+v", calls)
	}
	for _, c := range calls {
		if !strings.HasPrefix(c.ID, "call_") || len(c.ID) != len("call_")+24 {
			t.Errorf("id %q", c.ID)
		}
	}
	if calls[0].ID == calls[1].ID {
		t.Errorf("two calls share the id %q", calls[0].ID)
	}
}

// A call cut short by the token limit is dropped, not leaked as text.
func TestOutputTruncatedCall(t *testing.T) {
	o := newOutput(hermesFamily, nil, weatherTools, false)
	p := o.Push([]byte("Checking. <tool_call>{\"name\": \"get_wea"))
	q := o.Flush(true)
	if text := p.Text + q.Text; text != "Checking." || len(p.Calls)+len(q.Calls) != 0 {
		t.Errorf("got %q, %d calls", text, len(p.Calls)+len(q.Calls))
	}
}
