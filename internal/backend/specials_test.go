package backend

import (
	"fmt"
	"slices"
	"testing"
)

func testSpecials(t *testing.T) *Specials {
	t.Helper()
	var s Specials
	for _, a := range []struct {
		text string
		sp   Special
	}{
		{"<|im_start|>", Special{ID: 1, Kind: Control}},
		{"<|im_end|>", Special{ID: 2, Kind: Control}},
		{"<|im", Special{ID: 3, Kind: UserDefined}},
		{"<unk>", Special{ID: 4, Kind: Unknown}},
		{"\n", Special{ID: 5, Kind: UserDefined}},
		{"\n\n", Special{ID: 6, Kind: UserDefined, RStrip: true}},
		{"<|im_end|>x", Special{ID: 7, Kind: Control, LStrip: true}},
	} {
		if !s.Add(a.text, a.sp) {
			t.Fatalf("Add(%q) refused", a.text)
		}
	}
	if s.Add("<|im_end|>", Special{ID: 8, Kind: UserDefined}) {
		t.Error("Add took a second token for a text")
	}
	if s.Add("", Special{ID: 9}) {
		t.Error("Add took an empty text")
	}
	return &s
}

// The longest text at the start wins; in request data, control and
// unknown tokens are not matched and a shorter user-defined one may be.
func TestSpecialsLongest(t *testing.T) {
	s := testSpecials(t)
	tests := []struct {
		text   string
		data   bool
		id     Token
		n      int
		lstrip bool
		rstrip bool
	}{
		{"<|im_end|>\n", false, 2, 10, false, false},
		{"<|im_end|>x", false, 7, 11, true, false},
		{"<|im_end|>\n", true, 3, 4, false, false},
		{"<|im_end|>x", true, 3, 4, false, false},
		{"<|im_sta", false, 3, 4, false, false},
		{"<|i", false, 0, 0, false, false},
		{"<unk>", false, 4, 5, false, false},
		{"<unk>", true, 0, 0, false, false},
		{"\n\n\n", true, 6, 2, false, true},
		{"\nx", true, 5, 1, false, false},
		{"x<|im", false, 0, 0, false, false},
		{"", false, 0, 0, false, false},
	}
	for _, tt := range tests {
		sp, n := s.Longest(tt.text, tt.data)
		if n != tt.n || n > 0 && (sp.ID != tt.id || sp.LStrip != tt.lstrip || sp.RStrip != tt.rstrip) {
			t.Errorf("Longest(%q, data=%v) = %+v, %d; want token %d, %d", tt.text, tt.data, sp, n, tt.id, tt.n)
		}
	}
	for b, want := range map[byte]bool{'<': true, '\n': true, 'x': false, '|': false} {
		if s.Begins(b) != want {
			t.Errorf("Begins(%q) = %v", b, !want)
		}
	}
	var empty Specials
	if _, n := empty.Longest("<|im_end|>", false); n != 0 || empty.Begins('<') {
		t.Error("an empty Specials matched")
	}
	for range empty.Prefixes("x") {
		t.Error("an empty Specials yielded a prefix")
	}
}

func TestSpecialsPrefixes(t *testing.T) {
	s := testSpecials(t)
	var got []string
	for sp, n := range s.Prefixes("<|im_end|>xyz") {
		got = append(got, fmt.Sprint(sp.ID, ":", n))
	}
	if want := []string{"3:4", "2:10", "7:11"}; !slices.Equal(got, want) {
		t.Errorf("Prefixes = %v, want %v", got, want)
	}
	got = nil
	for sp := range s.Prefixes("<|im_end|>xyz") {
		got = append(got, fmt.Sprint(sp.ID))
		break
	}
	if len(got) != 1 {
		t.Errorf("Prefixes went on after break: %v", got)
	}
}

// Control and unknown tokens' texts are replaced, the longest at each
// place; user-defined tokens' texts stay, even where they hide a shorter
// control text's start.
func TestSpecialsReplaceMarkup(t *testing.T) {
	s := testSpecials(t)
	repl := func(id Token) string { return fmt.Sprintf("[%d]", id) }
	for text, want := range map[string]string{
		"":                                 "",
		"plain\n\ntext":                    "plain\n\ntext",
		"<|im_start|>user\nhi<|im_end|>\n": "[1]user\nhi[2]\n",
		"a<|im_end|>xb<unk>":               "a[7]b[4]",
		"<|im<|im_end|>":                   "<|im[2]",
	} {
		if got := s.ReplaceMarkup(text, repl); got != want {
			t.Errorf("ReplaceMarkup(%q) = %q, want %q", text, got, want)
		}
	}
}
