package runner

import (
	"slices"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
)

func TestPosAt(t *testing.T) {
	// Tokens 0-1 text, 2-7 an M-RoPE image of 6 tokens on 3 positions
	// (a 3x2 grid), 8-9 text.
	images := []ImageSpan{{Start: 2, Rows: &backend.Embeddings{Values: make([]float32, 6), Width: 1, Positions: 3, GridX: 3, GridY: 2}}}
	for _, c := range []struct{ i, want int }{
		{0, 0}, {2, 2}, {7, 7}, // inside the image: positions before it are unchanged
		{8, 5}, {10, 7}, // after it: three positions saved
	} {
		if got := PosAt(images, c.i); got != c.want {
			t.Errorf("PosAt(%d) = %d, want %d", c.i, got, c.want)
		}
	}
	if got := PosAt(nil, 9); got != 9 {
		t.Errorf("PosAt without images = %d, want 9", got)
	}
}

func TestReusable(t *testing.T) {
	img := ImageTokens([]byte("image"), 3)
	prompt := slices.Concat([]backend.Token{1, 2}, img, []backend.Token{3})
	for _, c := range []struct {
		name  string
		cache []backend.Token
		limit int
		want  int
	}{
		{"all", prompt, 100, len(prompt)},
		{"limited", prompt, 1, 1},
		{"up to the image", []backend.Token{1, 2, 9}, 100, 2},
		{"never part of an image", slices.Concat([]backend.Token{1, 2}, img[:2]), 100, 2},
		{"another image", slices.Concat([]backend.Token{1, 2}, ImageTokens([]byte("other"), 3)), 100, 2},
		{"the whole image", slices.Concat([]backend.Token{1, 2}, img, []backend.Token{8}), 100, 5},
	} {
		if got := Reusable(c.cache, prompt, c.limit); got != c.want {
			t.Errorf("%s: Reusable = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestImageTokens(t *testing.T) {
	a, b := ImageTokens([]byte("a"), 4), ImageTokens([]byte("b"), 4)
	if !slices.Equal(a, ImageTokens([]byte("a"), 4)) {
		t.Error("the same image gives other tokens")
	}
	if a[0] == b[0] {
		t.Error("two images share their first token")
	}
	for _, tok := range slices.Concat(a, b) {
		if tok >= 0 {
			t.Errorf("token %d is a vocabulary id", tok)
		}
	}
}
