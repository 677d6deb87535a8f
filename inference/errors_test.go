package inference_test

import (
	"errors"
	"testing"

	"github.com/inferkit/inferkit/inference"
)

// TestPathString writes paths as Go writes selectors, and a FieldError
// with its path.
func TestPathString(t *testing.T) {
	for _, tt := range []struct {
		p    inference.Path
		want string
	}{
		{nil, ""},
		{inference.Field("Temperature"), "Temperature"},
		{inference.Field("Format", "Schema"), "Format.Schema"},
		{inference.Field("Tools").At(2).Dot("Parameters"), "Tools[2].Parameters"},
		{inference.Field("Input").At(2).At(7), "Input[2][7]"},
		{inference.Field("Branches").At(0).Dot("Candidates").At(3).At(1), "Branches[0].Candidates[3][1]"},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%#v: %q, want %q", tt.p, got, tt.want)
		}
	}
	err := error(&inference.FieldError{Path: inference.Field("Messages").At(1), Reason: "bad"})
	if got, want := err.Error(), "inference: invalid request: Messages[1]: bad"; got != want || !errors.Is(err, inference.ErrInvalidRequest) {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestPathShared: At and Dot leave the path they extend as it was, so
// two paths grown from one do not overwrite each other's steps.
func TestPathShared(t *testing.T) {
	base := make(inference.Path, 0, 8).Dot("Branches").At(0)
	text, cands := base.Dot("Text"), base.Dot("Candidates")
	if text.String() != "Branches[0].Text" || cands.String() != "Branches[0].Candidates" || base.String() != "Branches[0]" {
		t.Errorf("%s, %s, %s", text, cands, base)
	}
}
