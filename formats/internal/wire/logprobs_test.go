package wire

import (
	"testing"
)

func TestTokenText(t *testing.T) {
	for in, want := range map[string]string{
		"Hi":           "Hi",
		"\xe2\x82":     `bytes:\xe2\x82`,
		"":             "",
		"\xe2\x82\xac": "€",
	} {
		if got := TokenText([]byte(in)); got != want {
			t.Errorf("TokenText(%q) = %q, want %q", in, got, want)
		}
	}
}
