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
	// MaxStateChars bounds the state, in characters; a JSON state counts
	// the characters of its text as the model reads it.
	MaxStateChars = 100_000
	MaxQuestions  = 100
	MaxImages     = 4
	// MaxOptions bounds the options of a choice.
	MaxOptions = 255
	// MaxLevels bounds the levels of a score.
	MaxLevels = 10
	// maxTextChars bounds each instruction and description as the model
	// reads it: a JSON one grows when it is written out.
	maxTextChars = MaxStateChars
)

// The question types.
const (
	TypeChoice = "choice"
	TypeScore  = "score"
	TypeNoul   = "noul"
)

// Request is a decision request: POST /v1/system.
//
// On the wire, state may be a string, or a JSON object or array, which
// the model reads as JSON text (see UnmarshalJSON); unknown fields are
// ignored.
type Request struct {
	// Model is the id of a decision model; echoed in the Response.
	Model string `json:"model"`
	// State is the text the questions are about.
	State string `json:"state"`
	// Questions maps each question's id to it. An id is any non-empty
	// string; the model never sees it.
	Questions map[string]Question `json:"questions"`
	// Images are pictures the questions may be about, for multimodal
	// models only: at most MaxImages. The model sees them before the state.
	Images []Image `json:"images,omitzero"`

	// err is a problem found while decoding, reported by Validate.
	err error
}

// UnmarshalJSON reads a request. A state that is a JSON object or array
// becomes its JSON text, formatted the same whatever the spacing sent: two
// spaces of indentation, keys in the order sent, strings with no more
// escapes than JSON needs. A state of another type, or too long, is
// reported by Validate.
func (r *Request) UnmarshalJSON(b []byte) error {
	var w struct {
		Model     string              `json:"model"`
		State     json.RawMessage     `json:"state"`
		Questions map[string]Question `json:"questions"`
		Images    []Image             `json:"images"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = Request{Model: w.Model, Questions: w.Questions, Images: w.Images}
	switch state := bytes.TrimSpace(w.State); {
	case len(state) == 0 || string(state) == "null":
		r.err = invalid(at("state"), "is required").typed("missing")
	case state[0] == '"':
		_ = json.Unmarshal(state, &r.State)
	case state[0] == '{' || state[0] == '[':
		var err error
		if r.State, err = jsonText(state, "  ", MaxStateChars); err != nil {
			r.err = invalid(at("state"), "%v", err)
		}
	default:
		r.err = invalid(at("state"), "must be a string, a JSON object or a JSON array").typed("string_type")
	}
	return nil
}

// Question is one typed question. Its JSON form carries the options of a
// choice as the object "criteria" (name to description, in order), the
// levels of a score as the array "criteria", and what yes and no mean for
// a noul as the object "criteria" with keys "true" and "false", either or
// both. Instructions and each description may be a string, a JSON object
// or array (read as its JSON text), or null (none).
type Question struct {
	Type string
	// Instructions is the question; empty asks the type's default
	// question.
	Instructions string
	// Options of a choice, in the order of the request.
	Options []Option
	// Labels of a score, from the lowest level to the highest. An empty
	// label is read as its level's number.
	Labels []string
	// Yes and No say what yes and what no mean, for a noul; either may
	// be empty.
	Yes, No string

	// legend is each score level as the request sent it, for the answer.
	legend []json.RawMessage
	// err is a problem found while decoding, reported by Validate.
	err error
}

// Option is one option of a choice. An option with no description is read
// by its name.
type Option struct {
	Name        string
	Description string
}

type wireQuestion struct {
	Type         string          `json:"type"`
	Instructions json.RawMessage `json:"instructions,omitzero"`
	Criteria     json.RawMessage `json:"criteria,omitzero"`
}

// UnmarshalJSON reads a question, keeping the order of a choice's options.
// A criteria that does not fit the type is reported by Validate, with the
// question's id.
func (q *Question) UnmarshalJSON(b []byte) error {
	var w wireQuestion
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*q = Question{Type: w.Type}
	var err error
	if q.Instructions, err = descriptionText(w.Instructions); err != nil {
		q.err = invalid(at("instructions"), "%v", err)
		return nil
	}
	crit := bytes.TrimSpace(w.Criteria)
	if len(crit) == 0 || string(crit) == "null" {
		return nil
	}
	switch w.Type {
	case TypeChoice:
		q.Options, q.err = parseOptions(crit)
	case TypeScore:
		q.Labels, q.legend, q.err = parseLevels(crit)
	case TypeNoul:
		q.Yes, q.No, q.err = parseNoul(crit)
	}
	return nil
}

// MarshalJSON writes the question in its wire form.
func (q Question) MarshalJSON() ([]byte, error) {
	w := wireQuestion{Type: q.Type}
	if q.Instructions != "" {
		w.Instructions, _ = json.Marshal(q.Instructions)
	}
	var crit []Option
	switch q.Type {
	case TypeChoice:
		crit = q.Options
	case TypeNoul:
		if q.Yes != "" {
			crit = append(crit, Option{"true", q.Yes})
		}
		if q.No != "" {
			crit = append(crit, Option{"false", q.No})
		}
	case TypeScore:
		if len(q.legend) == len(q.Labels) {
			w.Criteria, _ = json.Marshal(q.legend) // the levels as sent
		} else {
			w.Criteria, _ = json.Marshal(q.Labels)
		}
	}
	if crit != nil {
		var b bytes.Buffer
		b.WriteByte('{')
		for i, o := range crit {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(o.Name)
			b.Write(k)
			b.WriteByte(':')
			if o.Description == "" {
				b.WriteString("null")
			} else {
				v, _ := json.Marshal(o.Description)
				b.Write(v)
			}
		}
		b.WriteByte('}')
		w.Criteria = b.Bytes()
	}
	return json.Marshal(w)
}

// descriptionText is an instruction or description as the model reads it:
// a string as it is, a JSON object or array as its JSON text on one line,
// nothing for null or absent.
func descriptionText(raw json.RawMessage) (string, error) {
	switch raw = bytes.TrimSpace(raw); {
	case len(raw) == 0 || string(raw) == "null":
		return "", nil
	case raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case raw[0] == '{' || raw[0] == '[':
		return jsonText(raw, "", maxTextChars)
	}
	return "", errors.New("must be a string, a JSON object or array, or null")
}

// parseOptions reads a JSON object of option names to descriptions in
// order, refusing a name given twice. It takes time linear in the options,
// however many: Validate refuses more than MaxOptions only after decoding.
func parseOptions(b []byte) ([]Option, error) {
	var opts []Option
	err := eachKey(b, "must be an object of option names to descriptions", func(name string, raw json.RawMessage) error {
		desc, err := descriptionText(raw)
		if err != nil {
			return fmt.Errorf("option %q: the description %v", name, err)
		}
		opts = append(opts, Option{Name: name, Description: desc})
		return nil
	})
	return opts, err
}

// parseLevels reads a score's array of levels: their texts, and each as
// sent.
func parseLevels(b []byte) ([]string, []json.RawMessage, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return nil, nil, errors.New("must be an array of level descriptions, from the lowest level to the highest")
	}
	labels := make([]string, len(raws))
	for i, raw := range raws {
		var err error
		if labels[i], err = descriptionText(raw); err != nil {
			return nil, nil, fmt.Errorf("level %d %v", i, err)
		}
		raws[i] = bytes.TrimSpace(raw)
	}
	return labels, raws, nil
}

// parseNoul reads a noul's criteria: what "true" (yes) and "false" (no)
// mean, either or both.
func parseNoul(b []byte) (yes, no string, err error) {
	err = eachKey(b, `must be an object with "true" and "false", either or both`, func(key string, raw json.RawMessage) error {
		text, err := descriptionText(raw)
		switch {
		case key != "true" && key != "false":
			return fmt.Errorf(`has the key %q: only "true" and "false" are allowed`, key)
		case err != nil:
			return fmt.Errorf("%q %v", key, err)
		case key == "true":
			yes = text
		default:
			no = text
		}
		return nil
	})
	return yes, no, err
}

// eachKey calls fn with each key of the JSON object b and its value, in
// order, refusing a key given twice; notObject is the error for anything
// but an object.
func eachKey(b []byte, notObject string, fn func(string, json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New(notObject)
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if seen[key] {
			return fmt.Errorf("%q is given twice", key)
		}
		seen[key] = true
		if err := fn(key, raw); err != nil {
			return err
		}
	}
	return nil
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
	Param string
	// Type is the kind of fault, in the words of pydantic (whose errors
	// System One's server sends): "missing" for a required field that is
	// absent, "string_type" for a value of the wrong JSON type, and
	// "value_error" for the rest.
	Type    string
	Message string
}

// typed sets e's Type.
func (e *Error) typed(t string) *Error {
	e.Type = t
	return e
}

// Error says which field breaks which rule.
func (e *Error) Error() string { return "decision: " + e.Param + ": " + e.Message }

// invalid is an *Error at loc.
func invalid(loc []any, format string, args ...any) *Error {
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
	return &Error{Loc: loc, Param: p.String(), Type: "value_error", Message: fmt.Sprintf(format, args...)}
}

// at is a location in the request body, for invalid.
func at(loc ...any) []any { return loc }

// Validate checks the request against the limits; images says whether the
// model reads images. The error is an *Error.
func (r Request) Validate(images bool) error {
	if r.err != nil {
		return r.err
	}
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
	case r.Questions == nil:
		return invalid(at("questions"), "is required").typed("missing")
	case n == 0:
		return invalid(at("questions"), "must hold at least one question")
	case n > MaxQuestions:
		return invalid(at("questions"), "has %d questions, at most %d", n, MaxQuestions)
	}
	for _, id := range sortedNames(r.Questions) {
		if err := r.Questions[id].validate(id); err != nil {
			return err
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

// validate checks the question of id id.
func (q Question) validate(id string) error {
	if id == "" {
		return invalid(at("questions", id), "a question id must not be empty")
	}
	if e, ok := q.err.(*Error); ok {
		// Found while decoding, at a place inside the question.
		return invalid(append(at("questions", id), e.Loc...), "%s", e.Message)
	}
	crit := at("questions", id, "criteria")
	if q.err != nil {
		return invalid(crit, "%v", q.err)
	}
	switch q.Type {
	case TypeChoice:
		switch n := len(q.Options); {
		case n == 0:
			return invalid(crit, "a choice needs options")
		case n > MaxOptions:
			return invalid(crit, "has %d options, at most %d", n, MaxOptions)
		}
	case TypeScore:
		switch n := len(q.Labels); {
		case n < 2:
			return invalid(crit, "a score needs at least 2 levels, got %d", n)
		case n > MaxLevels:
			return invalid(crit, "has %d levels, at most %d", n, MaxLevels)
		}
	case TypeNoul:
	case "":
		return invalid(at("questions", id, "type"), "is required: choice, score or noul").typed("missing")
	default:
		return invalid(at("questions", id, "type"), "unknown type %q: choice, score or noul", q.Type)
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
