package formats

import (
	"strings"
	"testing"

	"github.com/inferkit/inferkit/inference"
)

// TestParamNamesIndexes: every name in a style's table holds as many
// "[]" as its key, so that each of the path's indexes lands in the name.
func TestParamNamesIndexes(t *testing.T) {
	for _, f := range []Style{StyleChat, StyleMessages, StyleResponses, StyleModels, StyleSystemOne} {
		for key, name := range f.params() {
			if strings.Count(key, "[]") != strings.Count(name, "[]") {
				t.Errorf("style %d: %q names %q", f, key, name)
			}
		}
	}
}

// TestEngineFieldNames maps the engine's paths to each style's
// parameter, and says the engine's own path where the name loses an
// index.
func TestEngineFieldNames(t *testing.T) {
	for _, tt := range []struct {
		f    Style
		p    inference.Path
		want string
	}{
		{StyleChat, inference.Field("Tools").At(3).Dot("Parameters"), "tools[3].function.parameters: bad"},
		{StyleMessages, inference.Field("Tools").At(3).Dot("Parameters"), "tools[3].input_schema: bad"},
		{StyleResponses, inference.Field("Tools").At(3).Dot("Parameters"), "tools[3].parameters: bad"},
		{StyleChat, inference.Field("Tools").At(3).Dot("Name"), "tools: Tools[3].Name (counting the system prompt): bad"},
		{StyleResponses, inference.Field("Messages").At(2), "input: Messages[2] (counting the system prompt): bad"},
		{StyleMessages, inference.Field("Search", "MaxSearches"), "tools.max_uses: bad"},
		{StyleChat, inference.Field("Branches").At(0).Dot("Text"), "Branches: Branches[0].Text (counting the system prompt): bad"},
		{StyleSystemOne, inference.Field("Summary"), "Summary: bad"},
	} {
		e := ErrorOf(&inference.FieldError{Path: tt.p, Reason: "bad"}).in(tt.f)
		if param, _, _ := strings.Cut(tt.want, ":"); e.Message != tt.want || e.Param != param {
			t.Errorf("style %d, %s: %q %q, want %q", tt.f, tt.p, e.Param, e.Message, tt.want)
		}
	}
}
