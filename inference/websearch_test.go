package inference

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/inferkit/inferkit/search"
)

var citeSources = []search.Result{
	{URL: "https://a.example/", Title: "A"},
	{URL: "https://b.example/", Title: "B"},
	{URL: "https://c.example/", Title: "C"},
}

// cite runs pieces through a citer and returns the released text and the
// citations, as "start-end:source" over that text.
func cite(pieces ...string) (string, []string) {
	c := &citer{sources: citeSources}
	var out strings.Builder
	var cites []string
	for _, p := range pieces {
		text, cs := c.push(p)
		out.WriteString(text)
		for _, x := range cs {
			cites = append(cites, fmt.Sprintf("%03d-%03d:%03d:%s", x.Start, x.End, x.Source, x.URL))
		}
	}
	out.WriteString(c.flush())
	return out.String(), cites
}

func TestCiter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pieces []string
		text   string
		cites  []string // start-end:source:url
	}{
		{"none", []string{"Paris is the capital."}, "Paris is the capital.", nil},
		{"one", []string{"Paris is the capital [1]."}, "Paris is the capital.",
			[]string{"000-020:001:https://a.example/"}},
		{"split marker", []string{"Paris is the capital [", "2", "]. Berlin", " too [3]"}, "Paris is the capital. Berlin too",
			[]string{"000-020:002:https://b.example/", "022-032:003:https://c.example/"}},
		{"two markers, one span", []string{"Both agree [1][2]."}, "Both agree.",
			[]string{"000-010:001:https://a.example/", "000-010:002:https://b.example/"}},
		{"spaced markers", []string{"Both agree [1] [2]."}, "Both agree.",
			[]string{"000-010:001:https://a.example/", "000-010:002:https://b.example/"}},
		{"unknown source stays", []string{"See [4] and [0] and [x] and [12345]."}, "See [4] and [0] and [x] and [12345].", nil},
		{"held to the end", []string{"An open [1", "2"}, "An open [12", nil},
		{"spaces kept between words", []string{"one ", "two ", " three"}, "one two  three", nil},
		{"utf-8", []string{"Café ☕ [1] déjà"}, "Café ☕ déjà", []string{"000-009:001:https://a.example/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, cites := cite(tc.pieces...)
			if text != tc.text || strings.Join(cites, " ") != strings.Join(tc.cites, " ") {
				t.Errorf("got %q %v, want %q %v", text, cites, tc.text, tc.cites)
			}
		})
	}
}

// FuzzCiter checks that whatever the text and however it is split, the
// citer releases whole UTF-8 characters, loses nothing but markers and the
// spaces before them, and gives spans inside the text.
func FuzzCiter(f *testing.F) {
	f.Add("Paris [1] is big [2][3]. [", 3)
	f.Add("[[[1]]] [9999] [", 1)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		if !utf8.ValidString(s) {
			return
		}
		c := &citer{sources: citeSources}
		var out strings.Builder
		var all []Citation
		for len(s) > 0 {
			n := max(1, cut%8)
			for n < len(s) && !utf8.RuneStart(s[n]) {
				n++
			}
			n = min(n, len(s))
			text, cs := c.push(s[:n])
			if !utf8.ValidString(text) {
				t.Fatalf("released %q", text)
			}
			out.WriteString(text)
			all = append(all, cs...)
			s = s[n:]
		}
		out.WriteString(c.flush())
		text := out.String()
		if c.out != len(text) {
			t.Fatalf("counted %d bytes, released %d", c.out, len(text))
		}
		for _, x := range all {
			if x.Start < 0 || x.Start > x.End || x.End > len(text) || x.Source < 1 || x.Source > len(citeSources) {
				t.Fatalf("citation %+v over %q", x, text)
			}
		}
	})
}
