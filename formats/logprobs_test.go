package formats_test

import (
	"testing"

	"github.com/inferkit/inferkit/formats"
)

func TestTokenText(t *testing.T) {
	for in, want := range map[string]string{
		"Hi":           "Hi",
		"\xe2\x82":     `bytes:\xe2\x82`,
		"":             "",
		"\xe2\x82\xac": "€",
	} {
		if got := formats.TokenText([]byte(in)); got != want {
			t.Errorf("TokenText(%q) = %q, want %q", in, got, want)
		}
	}
}
