package decision

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/inferkit/inferkit/inference"
)

// Limits of a Request.
const (
	MaxStateChars = 100_000
	MaxQuestions  = 100
	MaxImages     = 4
	// MaxOptions bounds the options of a choice and the labels of a score:
	// each needs a label of its own.
	MaxOptions = 52
)

// The question types.
const (
	TypeChoice = "choice"
	TypeScore  = "score"
	TypeNoul   = "noul"
)

// Request is a decision request: POST /v1/system.
type Request struct {
	// Model is the id of a decision model; echoed in the Response.
	Model string `json:"model"`
	// State is the text the questions are about.
	State string `json:"state"`
	// Questions maps each question's name to it.
	Questions map[string]Question `json:"questions"`
	// Images are pictures the questions may be about, for multimodal
	// models only: at most MaxImages. The model sees them before the state.
	Images []Image `json:"images,omitzero"`
}

// Question is one typed question. Its JSON form carries the options of a
// choice as the object "criteria" (name to description, in order) and the
// labels of a score as the array "criteria".
type Question struct {
	Type         string
	Instructions string
	// Options of a choice, in the order of the request.
	Options []Option
	// Labels of a score, from the lowest level to the highest.
	Labels []string

	// err is a problem found while decoding, reported by Validate.
	err error
}

// Option is one option of a choice.
type Option struct {
	Name        string
	Description string
}

type wireQuestion struct {
	Type         string          `json:"type"`
	Instructions string          `json:"instructions,omitzero"`
	Criteria     json.RawMessage `json:"criteria,omitzero"`
}

// UnmarshalJSON reads a question, keeping the order of a choice's options.
// A criteria that does not fit the type is reported by Validate, with the
// question's name.
func (q *Question) UnmarshalJSON(b []byte) error {
	var w wireQuestion
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*q = Question{Type: w.Type, Instructions: w.Instructions}
	crit := bytes.TrimSpace(w.Criteria)
	if len(crit) == 0 || string(crit) == "null" {
		return nil
	}
	switch w.Type {
	case TypeChoice:
		q.Options, q.err = parseOptions(crit)
	case TypeScore:
		if err := json.Unmarshal(crit, &q.Labels); err != nil {
			q.err = errors.New("must be an array of labels")
		}
	}
	return nil
}

// MarshalJSON writes the question in its wire form.
func (q Question) MarshalJSON() ([]byte, error) {
	w := wireQuestion{Type: q.Type, Instructions: q.Instructions}
	switch q.Type {
	case TypeChoice:
		var b bytes.Buffer
		b.WriteByte('{')
		for i, o := range q.Options {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(o.Name)
			v, _ := json.Marshal(o.Description)
			b.Write(k)
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteByte('}')
		w.Criteria = b.Bytes()
	case TypeScore:
		w.Criteria, _ = json.Marshal(q.Labels)
	}
	return json.Marshal(w)
}

// parseOptions reads a JSON object of option names to descriptions in
// order, refusing a name given twice. It takes time linear in the options,
// however many: Validate refuses more than MaxOptions only after decoding.
func parseOptions(b []byte) ([]Option, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("must be an object of option names to descriptions")
	}
	var opts []Option
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := t.(string)
		var desc string
		if err := dec.Decode(&desc); err != nil {
			return nil, fmt.Errorf("option %q: the description must be a string", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("option %q is given twice", name)
		}
		seen[name] = true
		opts = append(opts, Option{Name: name, Description: desc})
	}
	return opts, nil
}

// Error is a request that breaks a rule. It is a client error: a 400 on
// /v1/system, a 422 on /v1/systemone.
type Error struct {
	// Loc is the path to the field at fault in the request body: object
	// keys as strings, array indexes as ints, such as ["state"],
	// ["questions", "tone", "criteria"] or ["images", 1]. A question's id
	// is one element, whatever characters it holds.
	Loc []any
	// Param is Loc as one string: keys joined by dots, indexes in
	// brackets, such as "questions.tone.criteria" or "images[1]".
	Param   string
	Message string
}

// Error says which field breaks which rule.
func (e *Error) Error() string { return "decision: " + e.Param + ": " + e.Message }

// invalid is an *Error at loc.
func invalid(loc []any, format string, args ...any) error {
	var p strings.Builder
	for i, l := range loc {
		switch l := l.(type) {
		case int:
			fmt.Fprintf(&p, "[%d]", l)
		default:
			if i > 0 {
				p.WriteByte('.')
			}
			fmt.Fprint(&p, l)
		}
	}
	return &Error{Loc: loc, Param: p.String(), Message: fmt.Sprintf(format, args...)}
}

// at is a location in the request body, for invalid.
func at(loc ...any) []any { return loc }

// Validate checks the request against the limits; images says whether the
// model reads images. The error is an *Error.
func (r Request) Validate(images bool) error {
	switch n := utf8.RuneCountInString(r.State); {
	case n == 0:
		return invalid(at("state"), "must not be empty")
	case n > MaxStateChars:
		return invalid(at("state"), "has %d characters, at most %d", n, MaxStateChars)
	case strings.Contains(r.State, sentinel):
		// The prompt is split where the sentinel is: one in the state
		// would cut the state in two.
		return invalid(at("state"), "contains %q, which the prompt reserves", sentinel)
	}
	switch n := len(r.Questions); {
	case n == 0:
		return invalid(at("questions"), "must hold at least one question")
	case n > MaxQuestions:
		return invalid(at("questions"), "has %d questions, at most %d", n, MaxQuestions)
	}
	for _, name := range sortedNames(r.Questions) {
		q := r.Questions[name]
		switch q.Type {
		case TypeChoice:
			if q.err != nil {
				return invalid(at("questions", name, "criteria"), "%v", q.err)
			}
			switch n := len(q.Options); {
			case n == 0:
				return invalid(at("questions", name, "criteria"), "a choice needs options")
			case n > MaxOptions:
				return invalid(at("questions", name, "criteria"), "has %d options, at most %d", n, MaxOptions)
			}
		case TypeScore:
			if q.err != nil {
				return invalid(at("questions", name, "criteria"), "%v", q.err)
			}
			switch n := len(q.Labels); {
			case n < 2:
				return invalid(at("questions", name, "criteria"), "a score needs at least 2 labels, got %d", n)
			case n > MaxOptions:
				return invalid(at("questions", name, "criteria"), "has %d labels, at most %d", n, MaxOptions)
			}
		case TypeNoul:
		case "":
			return invalid(at("questions", name, "type"), "is required: choice, score or noul")
		default:
			return invalid(at("questions", name, "type"), "unknown type %q: choice, score or noul", q.Type)
		}
	}
	switch {
	case len(r.Images) > MaxImages:
		return invalid(at("images"), "has %d images, at most %d", len(r.Images), MaxImages)
	case len(r.Images) > 0 && !images:
		return invalid(at("images"), "model %q reads text only", r.Model)
	case len(r.Images) > 0 && strings.Contains(r.State, inference.ImageMarker):
		return invalid(at("state"), "contains %q, which stands for an image in a request with images", inference.ImageMarker)
	}
	for i, im := range r.Images {
		if im.err != nil {
			return invalid(at("images", i), "%v", im.err)
		}
	}
	return nil
}

func sortedNames(qs map[string]Question) []string {
	names := make([]string, 0, len(qs))
	for n := range qs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
