package codereview

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// A real multi-file diff of this repository's history parses into its
// files, and every line number it gives is the one git wrote.
func TestParseDiffRealHistory(t *testing.T) {
	b, err := os.ReadFile("testdata/ea21f92.diff")
	if err != nil {
		t.Fatal(err)
	}
	files, err := ParseDiff(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 || files[3].Path != "internal/backend/backendtest/bench.go" {
		t.Fatalf("files %+v", files)
	}
	added, removed := 0, 0
	for _, f := range files {
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				switch l.Kind {
				case '+':
					added++
				case '-':
					removed++
				}
			}
		}
	}
	if added != 18 || removed != 26 { // git show --stat: 18 insertions, 26 deletions
		t.Errorf("%d added, %d removed, want 18 and 26", added, removed)
	}
}

func TestParseDiff(t *testing.T) {
	for _, tc := range []struct {
		name, diff string
		want       []File
		err        bool
	}{
		{name: "one hunk", diff: "--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
			want: []File{{Path: "x.go", OldPath: "x.go", Hunks: []Hunk{{Header: "@@ -1,2 +1,2 @@", OldStart: 1, NewStart: 1, Lines: []Line{
				{Kind: ' ', Text: "a", Old: 1, New: 1}, {Kind: '-', Text: "b", Old: 2}, {Kind: '+', Text: "c", New: 2}}}}}}},
		{name: "new file", diff: "diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+hi\n",
			want: []File{{Path: "n", Hunks: []Hunk{{Header: "@@ -0,0 +1 @@", OldStart: 1, NewStart: 1, Lines: []Line{{Kind: '+', Text: "hi", New: 1}}}}}}},
		{name: "deleted file", diff: "--- a/d\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n",
			want: []File{{Path: "d", OldPath: "d", Hunks: []Hunk{{Header: "@@ -1 +0,0 @@", OldStart: 1, NewStart: 1, Lines: []Line{{Kind: '-', Text: "bye", Old: 1}}}}}}},
		{name: "binary", diff: "diff --git a/i.png b/i.png\nBinary files a/i.png and b/i.png differ\n",
			want: []File{{Path: "i.png", OldPath: "i.png", Binary: true}}},
		{name: "no newline marker", diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n",
			want: []File{{Path: "x", OldPath: "x", Hunks: []Hunk{{Header: "@@ -1 +1 @@", OldStart: 1, NewStart: 1, Lines: []Line{{Kind: '-', Text: "a", Old: 1}, {Kind: '+', Text: "b", New: 1}}}}}}},
		{name: "short hunk", diff: "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n", err: true},
		{name: "too many lines", diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n+a\n+b\n", err: true},
		{name: "bad header", diff: "--- a/x\n+++ b/x\n@@ -x +1 @@\n+a\n", err: true},
		{name: "not a diff", diff: "hello\nworld\n", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDiff(tc.diff)
			if tc.err {
				if !errors.Is(err, ErrDiff) {
					t.Fatalf("err %v, want ErrDiff", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !equalFiles(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if _, err := ParseDiff(strings.Repeat("x", MaxDiffBytes+1)); !errors.Is(err, ErrDiff) {
		t.Errorf("a diff past MaxDiffBytes: %v", err)
	}
}

func equalFiles(a, b []File) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Path != b[i].Path || a[i].OldPath != b[i].OldPath || a[i].Binary != b[i].Binary || len(a[i].Hunks) != len(b[i].Hunks) {
			return false
		}
		for k, h := range a[i].Hunks {
			g := b[i].Hunks[k]
			if h.Header != g.Header || h.OldStart != g.OldStart || h.NewStart != g.NewStart || len(h.Lines) != len(g.Lines) {
				return false
			}
			for j := range h.Lines {
				if h.Lines[j] != g.Lines[j] {
					return false
				}
			}
		}
	}
	return true
}

// Whatever the input, ParseDiff returns quickly, without panicking,
// and every line it gives has a number on a side of its kind.
func FuzzParseDiff(f *testing.F) {
	b, _ := os.ReadFile("testdata/ea21f92.diff")
	f.Add(string(b))
	f.Add("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n")
	f.Add("@@ -99999999999 +1 @@\n")
	f.Fuzz(func(t *testing.T, s string) {
		files, err := ParseDiff(s)
		if err != nil {
			return
		}
		for _, f := range files {
			for _, h := range f.Hunks {
				for _, l := range h.Lines {
					if l.Kind == '-' && (l.Old <= 0 || l.New != 0) || l.Kind == '+' && (l.New <= 0 || l.Old != 0) || l.Kind == ' ' && (l.New <= 0 || l.Old <= 0) {
						t.Fatalf("line %+v", l)
					}
				}
			}
		}
	})
}
