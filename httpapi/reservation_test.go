package httpapi

import (
	"testing"

	"github.com/inferkit/inferkit/inference"
)

// A request that searches reserves, per search, its prompt read again and
// the results of every search so far; one that does not, its prompt.
func TestReservationOfSearches(t *testing.T) {
	p := &inference.Prepared{InputTokens: 100, MaxOutputTokens: 50}
	if in, out := reservation(p); in != 100 || out != 50 {
		t.Errorf("without search: %d, %d", in, out)
	}
	p.Request.Search = &inference.SearchOptions{MaxSearches: 3, Results: 5, ContentChars: 1000}
	results := int64(5*(500+searchTurnTokens) + searchTurnTokens)
	in, out := reservation(p)
	if want := 100 + 3*100 + (1+2+3)*results; in != want || out != 50 {
		t.Errorf("with 3 searches: %d inputs, %d outputs; want %d, 50", in, out, want)
	}
}
