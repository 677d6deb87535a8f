package wire

import (
	"slices"
	"strings"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
)

// JoinLines is strings.Join with newlines, for system blocks.
func JoinLines(s []string) string { return strings.Join(s, "\n") }

// OrName returns a schema's name, or "response" for a schema without one
// (the messages style names none; the other styles require a name).
func OrName(name string) string {
	if name == "" {
		return "response"
	}
	return name
}

// HasImage reports whether any part is an image.
func HasImage(parts []inference.Part) bool {
	return slices.ContainsFunc(parts, func(p inference.Part) bool { return p.Image != nil || p.URL != "" })
}

// JoinText joins the text of the parts.
func JoinText(parts []inference.Part) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// ExplicitMaxTokens is the output limit of r to write on the wire: the
// caller's, or nil where the limit is the style's default.
func ExplicitMaxTokens(r formats.Request) *int {
	if r.ClampMaxTokens {
		return nil
	}
	return NonZero(r.MaxTokens)
}

// NonZero returns a pointer to n, or nil for 0.
func NonZero(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}
