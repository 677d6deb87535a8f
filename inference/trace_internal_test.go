package inference

import (
	"context"
	"testing"
)

// With no TracerProvider, the engine's tracing allocates nothing and
// hands back the caller's context: off costs a nil check.
func TestTracingOffAllocatesNothing(t *testing.T) {
	e := &Engine{}
	ctx := context.Background()
	yield := func(Event, error) bool { return true }
	req := Request{Model: "m", MaxTokens: 8}
	final := Event{Final: &Result{}}
	allocs := testing.AllocsPerRun(100, func() {
		c, y, end := e.traceGeneration(ctx, req, yield)
		y = e.tracePhases(c, y)
		y(final, nil)
		end()
		c2, endCall := e.traceCall(c, opEmbed, "m")
		endCall(Usage{}, nil)
		_, endTool := e.traceTool(c2, "t", "id")
		endTool(nil)
		e.tracePrepare(c, "m")(nil)
		if c != ctx || c2 != ctx {
			t.Fatal("tracing off made a new context")
		}
	})
	if allocs != 0 {
		t.Errorf("tracing off allocates %v times per request", allocs)
	}
}
