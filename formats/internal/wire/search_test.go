package wire

import (
	"testing"
)

func TestCharIndex(t *testing.T) {
	text := "Café ☕ [x]"
	for _, tc := range []struct{ off, want int }{{0, 0}, {3, 3}, {5, 4}, {6, 5}, {9, 6}, {100, 10}, {-1, 0}} {
		if got := CharIndex(text, tc.off); got != tc.want {
			t.Errorf("charIndex(%d) = %d, want %d", tc.off, got, tc.want)
		}
	}
}
