package formats_test

import (
	"strings"
	"testing"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/formats/messages"
	"github.com/inferkit/inferkit/formats/responses"
	"github.com/inferkit/inferkit/inference"
)

// TestEngineFieldNames maps the engine's paths to each style's
// parameter, and says the engine's own path where the name loses an
// index.
func TestEngineFieldNames(t *testing.T) {
	for _, tt := range []struct {
		f    formats.Style
		p    inference.Path
		want string
	}{
		{formats.StyleChat, inference.Field("Tools").At(3).Dot("Parameters"), "tools[3].function.parameters: bad"},
		{formats.StyleMessages, inference.Field("Tools").At(3).Dot("Parameters"), "tools[3].input_schema: bad"},
		{formats.StyleResponses, inference.Field("Tools").At(3).Dot("Parameters"), "tools[3].parameters: bad"},
		{formats.StyleChat, inference.Field("Tools").At(3).Dot("Name"), "tools: Tools[3].Name (counting the system prompt): bad"},
		{formats.StyleResponses, inference.Field("Messages").At(2), "input: Messages[2] (counting the system prompt): bad"},
		{formats.StyleMessages, inference.Field("Search", "MaxSearches"), "tools.max_uses: bad"},
		{formats.StyleChat, inference.Field("Branches").At(0).Dot("Text"), "Branches: Branches[0].Text (counting the system prompt): bad"},
		{formats.StyleSystemOne, inference.Field("Summary"), "Summary: bad"},
	} {
		e := named(tt.f, &inference.FieldError{Path: tt.p, Reason: "bad"})
		if param, _, _ := strings.Cut(tt.want, ":"); e.Message != tt.want || e.Param != param {
			t.Errorf("style %d, %s: %q %q, want %q", tt.f, tt.p, e.Param, e.Message, tt.want)
		}
	}
}

// named returns err as style f reports it, each style naming the
// engine's fields by its own table, as httpapi does for a route of the
// style: models and System One, like legacy completions and embeddings,
// in chat's names.
func named(f formats.Style, err error) *formats.Error {
	switch f {
	case formats.StyleMessages:
		return messages.Error(err)
	case formats.StyleResponses:
		return responses.Error(err)
	}
	return chat.Error(err)
}
