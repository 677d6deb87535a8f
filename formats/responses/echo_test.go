package responses

import (
	"testing"

	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/inference"
)

// A response echoes the web search tool and the tool choice as the request
// sent them: the preview's type, its options, and the tool even where
// tool_choice none offers no search.
func TestResponsesEchoSearchTool(t *testing.T) {
	for _, tc := range []struct {
		name, body, tool, choice string
		search                   bool
	}{
		{"preview, forced", `"tools":[{"type":"web_search_preview","search_context_size":"high"}],"tool_choice":{"type":"web_search_preview"}`,
			"web_search_preview", "web_search_preview", true},
		{"required, search only", `"tools":[{"type":"web_search_2025_08_26"}],"tool_choice":"required"`, "web_search_2025_08_26", "required", true},
		{"none", `"tools":[{"type":"web_search"}],"tool_choice":"none"`, "web_search", "none", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := Parse([]byte(`{"model":"m","input":"hi",` + tc.body + `}`))
			if err != nil {
				t.Fatal(err)
			}
			if (req.Search != nil) != tc.search {
				t.Errorf("search %+v, want it offered: %v", req.Search, tc.search)
			}
			r := NewResponse(req, inference.Result{Text: "x", FinishReason: inference.FinishStop}, formatstest.Options())
			if len(r.Tools) != 1 || r.Tools[0].Type != tc.tool || r.ToolChoice.Mode != tc.choice {
				t.Fatalf("echo: tools %+v, tool_choice %+v; want %s and %s", r.Tools, r.ToolChoice, tc.tool, tc.choice)
			}
			if tc.name == "preview, forced" && r.Tools[0].SearchContextSize != "high" {
				t.Errorf("search_context_size %q, want high", r.Tools[0].SearchContextSize)
			}
		})
	}
}
