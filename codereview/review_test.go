package codereview

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fakeGen answers every piece with a comment on its first line, and
// refuses texts longer than limit as too long for the context.
type fakeGen struct {
	limit   int
	pieces  int
	schemas []json.RawMessage
}

var firstLine = regexp.MustCompile(`(?m)^([RL])(\d+) `)

func (f *fakeGen) Generate(_ context.Context, g Generation) (Generated, error) {
	if len(g.User) > f.limit {
		return Generated{}, ErrTooLong
	}
	if g.Schema == nil {
		return Generated{Text: "A summary.", PromptTokens: 10, OutputTokens: 3}, nil
	}
	f.pieces++
	f.schemas = append(f.schemas, g.Schema)
	m := firstLine.FindStringSubmatch(g.User)
	path := strings.TrimPrefix(strings.SplitN(g.User, "\n", 2)[0], "File: ")
	side := map[string]string{"R": SideRight, "L": SideLeft}[m[1]]
	n, _ := strconv.Atoi(m[2])
	b, _ := json.Marshal(map[string]any{"comments": []Comment{{Path: path, Line: n, Side: side, Severity: "minor", Category: "style", Body: "Look here."}}})
	return Generated{Text: string(b), PromptTokens: len(g.User) / 4, OutputTokens: 20}, nil
}

// A review of a real diff reads every file in pieces that fit, splits
// a piece the model cannot take, says which hunks it could not read,
// and each comment points at a line the diff holds; the summary of a
// diff longer than it reads says so.
func TestReviewPieces(t *testing.T) {
	b, err := os.ReadFile("testdata/ea21f92.diff")
	if err != nil {
		t.Fatal(err)
	}
	gen := &fakeGen{limit: 1200}
	rv, err := New(Config{Generator: gen, PieceBytes: 4000, SummaryBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rv.Run(context.Background(), Request{Model: "m", Diff: string(b)})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := ParseDiff(string(b))
	if res.Files != 4 || res.Pieces < 4 || len(res.Comments) != res.Pieces || gen.pieces != res.Pieces {
		t.Errorf("files %d, pieces %d, comments %d, generations %d", res.Files, res.Pieces, len(res.Comments), gen.pieces)
	}
	for _, c := range res.Comments {
		if !inDiff(files, c) {
			t.Errorf("comment %+v points at no line of the diff", c)
		}
	}
	if !strings.Contains(res.Summary, "read the first") || res.Usage.Generations != res.Pieces+1 {
		t.Errorf("summary %q, usage %+v", res.Summary, res.Usage)
	}

	// A model that takes almost nothing: each hunk is split down to one
	// line, and what still does not fit is listed as not reviewed.
	gen = &fakeGen{limit: 60}
	rv, _ = New(Config{Generator: gen})
	res, err = rv.Run(context.Background(), Request{Model: "m", Diff: string(b), NoSummary: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotReviewed) == 0 || res.NotReviewed[0].Reason != "longer than the model's context" || res.Summary != "" {
		t.Errorf("not reviewed %+v, summary %q", res.NotReviewed, res.Summary)
	}
}

// inDiff reports whether c points at a line of files on its side.
func inDiff(files []File, c Comment) bool {
	for _, f := range files {
		if f.Path != c.Path {
			continue
		}
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				if c.Side == SideLeft && l.Kind == '-' && l.Old == c.Line || c.Side == SideRight && l.Kind != '-' && l.New == c.Line {
					return true
				}
			}
		}
	}
	return false
}

// A piece's schema admits its own file and lines only.
func TestPieceSchema(t *testing.T) {
	files, err := ParseDiff("--- a/x.go\n+++ b/x.go\n@@ -3,2 +3,2 @@\n a\n-b\n+c\n")
	if err != nil {
		t.Fatal(err)
	}
	p := pieces(files[0], 8000)[0]
	var s struct {
		Properties struct {
			Comments struct {
				Items struct {
					AnyOf []struct {
						Properties map[string]struct {
							Enum []any `json:"enum"`
						} `json:"properties"`
					} `json:"anyOf"`
				} `json:"items"`
			} `json:"comments"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(p.schema(false), &s); err != nil {
		t.Fatal(err)
	}
	v := s.Properties.Comments.Items.AnyOf
	if len(v) != 2 || len(v[0].Properties["line"].Enum) != 2 || v[0].Properties["line"].Enum[0] != 3.0 || v[0].Properties["line"].Enum[1] != 4.0 ||
		v[1].Properties["line"].Enum[0] != 4.0 || v[0].Properties["path"].Enum[0] != "x.go" || v[1].Properties["side"].Enum[0] != SideLeft {
		t.Errorf("schema %s", p.schema(false))
	}
	if !p.holds(Comment{Path: "x.go", Line: 4, Side: SideLeft}) || p.holds(Comment{Path: "x.go", Line: 5, Side: SideRight}) || p.holds(Comment{Path: "y.go", Line: 3, Side: SideRight}) {
		t.Error("holds")
	}
}
