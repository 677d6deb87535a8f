// Package codereview reviews unified diffs with a language model: a
// summary, and inline comments that each point at a line of the diff
// (path, line, side), produced under a JSON schema that admits only the
// lines the diff holds. A large diff is split by file and hunk into
// pieces that fit the model's context, and the result says what was not
// reviewed, and why: nothing is cut silently.
//
// The generations run through a Generator: HTTPGenerator runs them as
// chat completions of an inferkit API (an *httpapi.Handler) in process,
// under the caller's key, so that its authentication, rate limits and
// spend apply to every one. Handler serves reviews over HTTP, blocking
// and streamed.
package codereview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
)

// Generator runs one generation of a review. It is called from the
// review's goroutine, one generation at a time.
type Generator interface {
	Generate(ctx context.Context, g Generation) (Generated, error)
}

// Generation is one generation: a system and a user message to the
// model, an answer of at most MaxTokens, valid for Schema when it is not
// nil.
type Generation struct {
	Model        string
	System, User string
	Schema       json.RawMessage
	MaxTokens    int
}

// Generated is a generation's answer and its token counts.
type Generated struct {
	Text                       string
	PromptTokens, OutputTokens int
}

// ErrTooLong is what a Generator's error wraps when the generation does
// not fit in the model's context: the review splits the piece, or says
// it was not reviewed.
var ErrTooLong = errors.New("codereview: longer than the model's context")

// Kind is what a request asks for of a diff.
type Kind string

// The kinds of request.
const (
	// KindReview (the zero value): inline comments and a summary.
	KindReview Kind = ""
	// KindSummary: the summary alone.
	KindSummary Kind = "summary"
	// KindReleaseNotes: release notes over the changes, for users.
	KindReleaseNotes Kind = "release_notes"
	// KindDocumentation: documentation of the functions and types the
	// diff adds or changes.
	KindDocumentation Kind = "documentation"
)

// Request asks for a review of a diff.
type Request struct {
	// Kind is what it asks for: a review, a summary or release notes.
	Kind Kind
	// Model is the model that reviews.
	Model string
	// Diff is a unified diff (git diff), at most MaxDiffBytes.
	Diff string
	// Rules, if any, are the team's own rules, which each comment may
	// name; at most 8,000 characters.
	Rules string
	// Security makes the review a security scan: comments of category
	// security only.
	Security bool
	// NoSummary leaves the summary out.
	NoSummary bool
	// Memories are what reviewers of the repository said of earlier
	// reviews (comments they dismissed, what they asked for), which the
	// model reads before the diff; at most MaxMemories of at most 500
	// characters.
	Memories []string
	// Context is text the change links to, such as the issues a pull
	// request fixes, which the model reads before the diff; at most
	// MaxContext texts of at most MaxContextChars characters.
	Context []string
}

// MaxMemories bounds Request.Memories.
const MaxMemories = 20

// MaxContext bounds Request.Context: texts, and characters each.
const (
	MaxContext      = 5
	MaxContextChars = 4000
)

// The severities and categories of a comment.
var (
	Severities = []string{"info", "minor", "major", "critical"}
	Categories = []string{"bug", "security", "performance", "style", "tests", "docs"}
)

// Comment is one inline comment of a review.
type Comment struct {
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Side     string `json:"side"`
	Severity string `json:"severity"`
	Category string `json:"category"`
	Body     string `json:"body"`
	// Suggestion, when set, replaces the line.
	Suggestion string `json:"suggestion,omitempty"`
	// Excerpt is the piece of the diff the comment was written on, as
	// the model read it: a fine-tuning example's prompt.
	Excerpt string `json:"-"`
}

// NotReviewed is a part of a diff that the review did not read.
type NotReviewed struct {
	Path   string `json:"path"`
	Hunk   string `json:"hunk,omitempty"` // its header; empty for a whole file
	Reason string `json:"reason"`
}

// Usage counts a review's tokens, every generation's together.
type Usage struct {
	Generations  int `json:"generations"`
	PromptTokens int `json:"prompt_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Result is a finished review.
type Result struct {
	Summary     string        `json:"summary"`
	Comments    []Comment     `json:"comments"`
	NotReviewed []NotReviewed `json:"not_reviewed"`
	// Files is the number of files in the diff, Pieces the pieces the
	// review read them in.
	Files  int   `json:"files"`
	Pieces int   `json:"pieces"`
	Usage  Usage `json:"usage"`
}

// Event is one step of a streamed review: a comment as its piece is
// reviewed, a part not reviewed, the summary, and last the Final
// result.
type Event struct {
	Comment     *Comment
	NotReviewed *NotReviewed
	Summary     string
	Final       *Result
}

// Config configures a Reviewer. Generator is required.
type Config struct {
	Generator Generator
	// PieceBytes bounds the diff text of one piece, 1,000 to 64,000;
	// 0 means 8,000. A piece that does not fit the model's context is
	// split in two, down to one hunk, which is then not reviewed.
	PieceBytes int
	// SummaryBytes bounds the diff text the summary reads, 1,000 to
	// 256,000; 0 means 24,000. A summary of a longer diff says it read
	// only its start.
	SummaryBytes int
	// MaxTokens bounds each generation's answer; 0 means 1,024.
	MaxTokens int
}

// Reviewer reviews diffs. It is safe for concurrent use; it holds
// nothing to close.
type Reviewer struct {
	gen                  Generator
	pieceBytes, sumBytes int
	maxTokens            int
}

// New checks cfg and returns its Reviewer.
func New(cfg Config) (*Reviewer, error) {
	switch {
	case cfg.Generator == nil:
		return nil, errors.New("codereview: Config.Generator is nil")
	case cfg.PieceBytes != 0 && (cfg.PieceBytes < 1000 || cfg.PieceBytes > 64000):
		return nil, fmt.Errorf("codereview: Config.PieceBytes %d, want 1,000 to 64,000", cfg.PieceBytes)
	case cfg.SummaryBytes != 0 && (cfg.SummaryBytes < 1000 || cfg.SummaryBytes > 256000):
		return nil, fmt.Errorf("codereview: Config.SummaryBytes %d, want 1,000 to 256,000", cfg.SummaryBytes)
	case cfg.MaxTokens < 0 || cfg.MaxTokens > 32768:
		return nil, fmt.Errorf("codereview: Config.MaxTokens %d, want 1 to 32,768", cfg.MaxTokens)
	}
	r := &Reviewer{gen: cfg.Generator, pieceBytes: cfg.PieceBytes, sumBytes: cfg.SummaryBytes, maxTokens: cfg.MaxTokens}
	if r.pieceBytes == 0 {
		r.pieceBytes = 8000
	}
	if r.sumBytes == 0 {
		r.sumBytes = 24000
	}
	if r.maxTokens == 0 {
		r.maxTokens = 1024
	}
	return r, nil
}

// maxRules bounds Request.Rules, in characters.
const maxRules = 8000

// Check validates req and parses its diff, before any generation.
func Check(req Request) ([]File, error) {
	switch {
	case req.Model == "":
		return nil, &FieldError{Field: "model", Reason: "is required"}
	case strings.TrimSpace(req.Diff) == "":
		return nil, &FieldError{Field: "diff", Reason: "is required"}
	case len([]rune(req.Rules)) > maxRules:
		return nil, &FieldError{Field: "rules", Reason: fmt.Sprintf("is longer than %d characters", maxRules)}
	case summaryPrompts[req.Kind] == "":
		return nil, &FieldError{Field: "kind", Reason: fmt.Sprintf("%q is not a review, a summary, release notes or documentation", req.Kind)}
	case len(req.Context) > MaxContext:
		return nil, &FieldError{Field: "context", Reason: fmt.Sprintf("%d texts, more than %d", len(req.Context), MaxContext)}
	case len(req.Memories) > MaxMemories:
		return nil, &FieldError{Field: "memories", Reason: fmt.Sprintf("%d, more than %d", len(req.Memories), MaxMemories)}
	case req.Kind != KindReview && (req.Security || req.Rules != "" || req.NoSummary):
		return nil, &FieldError{Field: "security", Reason: "security, rules and summary apply to reviews"}
	}
	files, err := ParseDiff(req.Diff)
	if err != nil {
		return nil, &FieldError{Field: "diff", Reason: err.Error()}
	}
	return files, nil
}

// FieldError is a request's error in one field.
type FieldError struct {
	Field, Reason string
}

func (e *FieldError) Error() string { return "codereview: " + e.Field + " " + e.Reason }

// Review runs req: each piece of the diff in turn, then the summary.
// Stopping early (break) or cancelling ctx stops it before its next
// generation. An error, if any, is the last pair.
func (r *Reviewer) Review(ctx context.Context, req Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		files, err := Check(req)
		if err != nil {
			yield(Event{}, err)
			return
		}
		res := Result{Files: len(files), Comments: []Comment{}, NotReviewed: []NotReviewed{}}
		skip := func(nr NotReviewed) bool {
			if n := len(res.NotReviewed); n > 0 && res.NotReviewed[n-1] == nr {
				return true // another run of the same hunk's lines
			}
			res.NotReviewed = append(res.NotReviewed, nr)
			return yield(Event{NotReviewed: &nr}, nil)
		}
		var queue []piece
		for _, f := range files {
			if req.Kind != KindReview {
				break // a summary or release notes read the whole diff at once
			}
			switch {
			case f.Binary:
				if !skip(NotReviewed{Path: f.Path, Reason: "a binary file"}) {
					return
				}
			case len(f.Hunks) == 0:
				if !skip(NotReviewed{Path: f.Path, Reason: "no changed lines (a rename or a mode change)"}) {
					return
				}
			default:
				queue = append(queue, pieces(f, r.pieceBytes)...)
			}
		}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			comments, err := r.reviewPiece(ctx, req, p, &res.Usage)
			if errors.Is(err, ErrTooLong) {
				if halves := p.split(); halves != nil {
					queue = append(halves, queue...)
					continue
				}
				for _, h := range p.hunks {
					if !skip(NotReviewed{Path: p.file, Hunk: h.Header, Reason: "longer than the model's context"}) {
						return
					}
				}
				continue
			}
			if err != nil {
				yield(Event{}, err)
				return
			}
			res.Pieces++
			for _, c := range comments {
				res.Comments = append(res.Comments, c)
				if !yield(Event{Comment: &c}, nil) {
					return
				}
			}
		}
		if !req.NoSummary {
			if res.Summary, err = r.summary(ctx, req.Model, summaryPrompts[req.Kind], files, &res.Usage); err != nil {
				yield(Event{}, err)
				return
			}
			if !yield(Event{Summary: res.Summary}, nil) {
				return
			}
		}
		yield(Event{Final: &res}, nil)
	}
}

// Run runs req to the end and returns its result.
func (r *Reviewer) Run(ctx context.Context, req Request) (Result, error) {
	for ev, err := range r.Review(ctx, req) {
		if err != nil {
			return Result{}, err
		}
		if ev.Final != nil {
			return *ev.Final, nil
		}
	}
	return Result{}, errors.New("codereview: the review ended without a result")
}

// The prompts.
const (
	reviewPrompt = "You are a careful code reviewer. Review the changed lines of one file of a diff below: point out bugs, risky changes, missing tests and unclear code. " +
		"Each line of the diff starts with its side and number (R12 is line 12 of the new file, L7 line 7 of the old one) and +, - or a space for added, removed and unchanged. " +
		"Comment only where it matters, on the line it concerns; an empty list is a good answer for a good change."
	securityPrompt = "You are an application security reviewer. Examine the changed lines of one file of a diff below for security flaws only: injection, path traversal, unsafe deserialisation, missing authentication or authorisation checks, secrets in the code, weak cryptography and unchecked input. " +
		"Each line of the diff starts with its side and number (R12 is line 12 of the new file, L7 line 7 of the old one). Comment on each flaw's line, with the risk and a fix; an empty list if there are none."
	rulesPrompt    = "\n\nAlso hold the change to this team's own rules, and name the rule a comment concerns:\n"
	memoriesPrompt = "\n\nThe reviewers of this repository said this of earlier reviews; heed it:"
	contextPrompt  = "\n\nThe change concerns these issues; check that it does what they ask:"
)

// summaryPrompts are the prompts of a review's summary, a summary and
// release notes.
var summaryPrompts = map[Kind]string{
	KindReview:        "Summarise the following diff in two or three sentences, for the people who review it.",
	KindSummary:       "Summarise the following diff in two or three sentences, for the people who review it.",
	KindReleaseNotes:  "Write release notes for the following changes, for the project's users: short lists under the headings Added, Changed and Fixed (leave out empty ones), one line per change, in plain words and without internal detail.",
	KindDocumentation: "Write documentation for each function, method and type that the following diff adds or changes: its name, then what it does, its parameters and results, and what a caller must know, in the style of the code's language. Leave out what the diff does not touch.",
}

// systemPrompt is the system prompt of a review's pieces: the review's
// or the security scan's, with the team's rules and the repository's
// memories.
func systemPrompt(req Request) string {
	system := reviewPrompt
	if req.Security {
		system = securityPrompt
	}
	if req.Rules != "" {
		system += rulesPrompt + req.Rules
	}
	if len(req.Context) > 0 {
		system += contextPrompt
		for _, c := range req.Context {
			system += "\n\n" + clipText(c, MaxContextChars)
		}
	}
	if len(req.Memories) > 0 {
		system += memoriesPrompt
		for _, m := range req.Memories {
			system += "\n- " + clipText(m, 500)
		}
	}
	return system
}

// reviewPiece reviews one piece and returns its comments, each checked
// against the piece's lines.
func (r *Reviewer) reviewPiece(ctx context.Context, req Request, p piece, u *Usage) ([]Comment, error) {
	system := systemPrompt(req)
	schema := p.schema(req.Security)
	g, err := r.gen.Generate(ctx, Generation{Model: req.Model, System: system, User: p.text, Schema: schema, MaxTokens: r.maxTokens})
	if err != nil {
		return nil, err
	}
	u.Generations++
	u.PromptTokens += g.PromptTokens
	u.OutputTokens += g.OutputTokens
	var out struct {
		Comments []Comment `json:"comments"`
	}
	if err := json.Unmarshal([]byte(g.Text), &out); err != nil {
		return nil, fmt.Errorf("codereview: the model's answer for %s is not the schema's JSON: %v", p.file, err)
	}
	for i, c := range out.Comments {
		if !p.holds(c) {
			return nil, fmt.Errorf("codereview: comment %d on %s points at %s line %d, which the piece does not hold", i, p.file, c.Side, c.Line)
		}
		if req.Security {
			out.Comments[i].Category = "security"
		}
		out.Comments[i].Excerpt = p.text
	}
	return out.Comments, nil
}

// summary writes the summary (or release notes: system) of the diff,
// from at most sumBytes of it.
func (r *Reviewer) summary(ctx context.Context, model, system string, files []File, u *Usage) (string, error) {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "--- %s\n", f.Path)
		for _, h := range f.Hunks {
			b.WriteString(h.Header + "\n")
			for _, l := range h.Lines {
				b.WriteByte(l.Kind)
				b.WriteString(l.Text + "\n")
			}
		}
	}
	text, cut := b.String(), false
	if len(text) > r.sumBytes {
		text, cut = clipText(text, r.sumBytes), true
	}
	for ; ; text, cut = clipText(text, len(text)/2), true {
		g, err := r.gen.Generate(ctx, Generation{Model: model, System: system, User: text, MaxTokens: min(r.maxTokens, 512)})
		if errors.Is(err, ErrTooLong) && len(text) > 1000 {
			continue
		}
		if err != nil {
			return "", err
		}
		u.Generations++
		u.PromptTokens += g.PromptTokens
		u.OutputTokens += g.OutputTokens
		s := strings.TrimSpace(g.Text)
		if cut {
			s += fmt.Sprintf(" (This summary read the first %d bytes of the diff's %d.)", len(text), b.Len())
		}
		return s, nil
	}
}

// piece is a part of one file's hunks that one generation reviews.
type piece struct {
	file  string
	hunks []Hunk
	text  string // as the model reads it
}

// pieces splits a file's hunks into pieces of at most max bytes of text
// each; a hunk longer than that is split into runs of its lines.
func pieces(f File, max int) []piece {
	var out []piece
	var cur []Hunk
	size := 0
	flush := func() {
		if len(cur) > 0 {
			out = append(out, newPiece(f.Path, cur))
			cur, size = nil, 0
		}
	}
	for _, h := range f.Hunks {
		for _, part := range splitHunk(h, max) {
			n := hunkBytes(part)
			if size+n > max {
				flush()
			}
			cur = append(cur, part)
			size += n
		}
	}
	flush()
	return out
}

// splitHunk splits a hunk whose text is longer than max bytes into runs
// of its lines, each a hunk of its own with the same header.
func splitHunk(h Hunk, max int) []Hunk {
	if hunkBytes(h) <= max {
		return []Hunk{h}
	}
	var out []Hunk
	cur := Hunk{Header: h.Header}
	size := 0
	for _, l := range h.Lines {
		n := len(l.Text) + 16
		if size+n > max && len(cur.Lines) > 0 {
			out = append(out, cur)
			cur, size = Hunk{Header: h.Header}, 0
		}
		cur.Lines = append(cur.Lines, l)
		size += n
	}
	return append(out, cur)
}

// hunkBytes is about the length of a hunk's text as the model reads it.
func hunkBytes(h Hunk) int {
	n := len(h.Header) + 1
	for _, l := range h.Lines {
		n += len(l.Text) + 16
	}
	return n
}

// newPiece renders hunks of file for the model: each line with its
// side and number.
func newPiece(file string, hunks []Hunk) piece {
	var b strings.Builder
	fmt.Fprintf(&b, "File: %s\n", file)
	for _, h := range hunks {
		b.WriteString(h.Header + "\n")
		for _, l := range h.Lines {
			switch l.Kind {
			case '-':
				fmt.Fprintf(&b, "L%d - %s\n", l.Old, l.Text)
			case '+':
				fmt.Fprintf(&b, "R%d + %s\n", l.New, l.Text)
			default:
				fmt.Fprintf(&b, "R%d   %s\n", l.New, l.Text)
			}
		}
	}
	return piece{file: file, hunks: hunks, text: b.String()}
}

// split halves a piece of several hunks (or one hunk of several lines);
// nil for one that cannot be split.
func (p piece) split() []piece {
	if len(p.hunks) > 1 {
		m := len(p.hunks) / 2
		return []piece{newPiece(p.file, p.hunks[:m]), newPiece(p.file, p.hunks[m:])}
	}
	if h := p.hunks[0]; len(h.Lines) > 1 {
		m := len(h.Lines) / 2
		a, b := Hunk{Header: h.Header, Lines: h.Lines[:m]}, Hunk{Header: h.Header, Lines: h.Lines[m:]}
		return []piece{newPiece(p.file, []Hunk{a}), newPiece(p.file, []Hunk{b})}
	}
	return nil
}

// lines returns the line numbers of a piece on each side: RIGHT for
// added and context lines, LEFT for removed ones.
func (p piece) lines() (right, left []int) {
	for _, h := range p.hunks {
		for _, l := range h.Lines {
			if l.Kind == '-' {
				left = append(left, l.Old)
			} else {
				right = append(right, l.New)
			}
		}
	}
	return right, left
}

// holds reports whether c is on the piece's file and one of its lines.
func (p piece) holds(c Comment) bool {
	right, left := p.lines()
	switch c.Side {
	case SideRight:
		return c.Path == p.file && slices.Contains(right, c.Line)
	case SideLeft:
		return c.Path == p.file && slices.Contains(left, c.Line)
	}
	return false
}

// maxComments bounds the comments of one piece.
const maxComments = 12

// schema is the JSON schema of a piece's answer: comments whose path is
// the piece's file and whose line is one of its lines on the side it
// names; with security, of category security only.
func (p piece) schema(security bool) json.RawMessage {
	right, left := p.lines()
	categories := Categories
	if security {
		categories = []string{"security"}
	}
	comment := func(side string, lines []int) map[string]any {
		return map[string]any{
			"type": "object",
			"properties": map[string]any{
				"path":       map[string]any{"type": "string", "enum": []string{p.file}},
				"line":       map[string]any{"type": "integer", "enum": lines},
				"side":       map[string]any{"type": "string", "enum": []string{side}},
				"severity":   map[string]any{"type": "string", "enum": Severities},
				"category":   map[string]any{"type": "string", "enum": categories},
				"body":       map[string]any{"type": "string", "minLength": 1, "maxLength": 600},
				"suggestion": map[string]any{"type": "string", "maxLength": 600},
			},
			"required":             []string{"path", "line", "side", "severity", "category", "body"},
			"additionalProperties": false,
		}
	}
	var variants []any
	if len(right) > 0 {
		variants = append(variants, comment(SideRight, right))
	}
	if len(left) > 0 {
		variants = append(variants, comment(SideLeft, left))
	}
	items := any(map[string]any{"anyOf": variants})
	if len(variants) == 1 {
		items = variants[0]
	}
	b, _ := json.Marshal(map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"comments": map[string]any{"type": "array", "maxItems": maxComments, "items": items}},
		"required":             []string{"comments"},
		"additionalProperties": false,
	})
	return b
}
