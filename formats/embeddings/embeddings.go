package embeddings

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
)

// Request is the body of POST /v1/embeddings, in OpenAI's shape.
type Request struct {
	// Model is required.
	Model string `json:"model"`
	// Input is what to embed: one string, an array of strings, an array
	// of token ids (one input), or an array of arrays of token ids.
	Input Input `json:"input"`
	// EncodingFormat is "float" (the default) or "base64".
	EncodingFormat string `json:"encoding_format,omitzero"`
	// Dimensions asks for shorter vectors, for models trained for it.
	Dimensions *int `json:"dimensions,omitzero"`
	// User identifies the end user, for abuse tracking: Canonical.User,
	// which httpapi's access log records.
	User string `json:"user,omitzero"`
}

// names names the engine's fields as this style does (see
// formats.ParamNames): the wire's own indexes, input[3] or a token of
// it, input[3][5].
var names = formats.ParamNames{
	"Input":      "input",
	"Input[]":    "input[]",
	"Input[][]":  "input[][]",
	"Dimensions": "dimensions",
}

// Error returns err as the embeddings endpoint reports it (formats.ErrorOf),
// an engine's error about one field naming the wire's parameter, such as
// input[3][5] for Input[3][5]. Write it with formats.WriteError in
// formats.StyleChat, the shape of this style's errors.
func Error(err error) *formats.Error {
	return names.Error(err)
}

// Input is the input of an embeddings request: Texts, or Tokens (one
// token array per input). The zero value is absent.
type Input struct {
	Texts  []string
	Tokens [][]int
	// Single records that the wire value was one string or one token
	// array rather than an array of them.
	Single bool
	// err is the type error found while decoding, reported with its path
	// by the request's validation.
	err error
}

// MarshalJSON writes the input in the shape it was read in.
func (in Input) MarshalJSON() ([]byte, error) {
	switch {
	case in.Tokens != nil && in.Single && len(in.Tokens) == 1:
		return json.Marshal(in.Tokens[0])
	case in.Tokens != nil:
		return json.Marshal(in.Tokens)
	case in.Single && len(in.Texts) == 1:
		return json.Marshal(in.Texts[0])
	case in.Texts != nil:
		return json.Marshal(in.Texts)
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads a string, an array of strings, an array of
// integers or an array of arrays of integers. A value of another shape
// is kept as an error that validation reports with its path.
func (in *Input) UnmarshalJSON(data []byte) error {
	*in = Input{}
	switch kind := formats.JSONKind(data); kind {
	case "null":
		return nil
	case "string":
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		in.Texts, in.Single = []string{s}, true
		return nil
	case "array":
	default:
		in.err = formats.TypeError("input", kind, "string or array")
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return err
	}
	if len(items) == 0 {
		in.Texts = []string{}
		return nil
	}
	switch first := formats.JSONKind(items[0]); first {
	case "string":
		in.Texts = make([]string, len(items))
		for i, item := range items {
			if k := formats.JSONKind(item); k != "string" {
				in.err = formats.TypeError(fmt.Sprintf("input[%d]", i), k, "string")
				return nil
			}
			if err := json.Unmarshal(item, &in.Texts[i]); err != nil {
				return err
			}
		}
	case "number":
		ids, err := tokenIDs("input", items)
		in.Tokens, in.Single, in.err = [][]int{ids}, true, err
	case "array":
		in.Tokens = make([][]int, len(items))
		for i, item := range items {
			param := fmt.Sprintf("input[%d]", i)
			if k := formats.JSONKind(item); k != "array" {
				in.err = formats.TypeError(param, k, "array of integers")
				return nil
			}
			var row []json.RawMessage
			if err := json.Unmarshal(item, &row); err != nil {
				return err
			}
			if in.Tokens[i], in.err = tokenIDs(param, row); in.err != nil {
				return nil
			}
		}
	default:
		in.err = formats.TypeError("input[0]", first, "string, integer or array of integers")
	}
	return nil
}

// tokenIDs reads an array of token ids: integers from 0 to 2^31-1.
func tokenIDs(param string, items []json.RawMessage) ([]int, error) {
	ids := make([]int, len(items))
	for i, item := range items {
		p := fmt.Sprintf("%s[%d]", param, i)
		if k := formats.JSONKind(item); k != "number" {
			return nil, formats.TypeError(p, k, "integer")
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(item)), 10, 64)
		if err != nil {
			return nil, formats.TypeError(p, "number "+clipValue(string(item)), "integer")
		}
		if n < 0 || n > math.MaxInt32 {
			return nil, formats.Invalid(p, "%s: token id %d out of range", p, n)
		}
		ids[i] = int(n)
	}
	return ids, nil
}

// clipValue shortens a value quoted in an error message.
func clipValue(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Canonical is a checked embeddings request: what the engine embeds and
// how the response writes the vectors.
type Canonical struct {
	// Request is the engine's request. Its Dimensions is the wire
	// dimensions, 0 when absent: whether the model may be truncated is
	// for the server to check against its catalog.
	Request inference.EmbedRequest
	// Base64 writes each vector as the base64 of its little-endian
	// float32 bytes instead of an array of numbers.
	Base64 bool
	// User is the request's end user (user), "" when none.
	User string
}

// Parse decodes and checks an embeddings request body: a model, 1 to
// inference.MaxEmbedInputs inputs, none empty, token ids that are
// non-negative 32-bit integers, encoding_format float or base64, and
// dimensions of at least 1. It fails with a *formats.RequestError naming
// the parameter, such as input[3].
func Parse(body []byte) (Canonical, error) {
	var r Request
	if err := formats.Decode(body, &r); err != nil {
		return Canonical{}, err
	}
	return r.Canonical()
}

// Canonical checks r and returns what it asks of the engine.
func (r *Request) Canonical() (Canonical, error) {
	if r.Model == "" {
		return Canonical{}, formats.Missing("model")
	}
	in := r.Input
	if in.err != nil {
		return Canonical{}, in.err
	}
	n := len(in.Texts)
	if in.Tokens != nil {
		n = len(in.Tokens)
	}
	switch {
	case in.Texts == nil && in.Tokens == nil:
		return Canonical{}, formats.Missing("input")
	case n == 0:
		return Canonical{}, formats.Invalid("input", "input: an empty array; want 1 to %d inputs", inference.MaxEmbedInputs)
	case n > inference.MaxEmbedInputs:
		return Canonical{}, formats.Invalid("input", "input: %d inputs, at most %d", n, inference.MaxEmbedInputs)
	}
	for i := range n {
		if (in.Tokens != nil && len(in.Tokens[i]) == 0) || (in.Tokens == nil && in.Texts[i] == "") {
			p := fmt.Sprintf("input[%d]", i)
			if in.Single {
				p = "input"
			}
			return Canonical{}, formats.Invalid(p, "%s: empty; every input needs at least one character or token", p)
		}
	}
	out := Canonical{Request: inference.EmbedRequest{Model: r.Model, Input: in.Texts, Tokens: in.Tokens}, User: r.User}
	switch r.EncodingFormat {
	case "", "float":
	case "base64":
		out.Base64 = true
	default:
		return Canonical{}, formats.Invalid("encoding_format", "encoding_format: %q; want float or base64", clipValue(r.EncodingFormat))
	}
	if r.Dimensions != nil {
		if *r.Dimensions < 1 {
			return Canonical{}, formats.Invalid("dimensions", "dimensions: %d; want at least 1", *r.Dimensions)
		}
		out.Request.Dimensions = *r.Dimensions
	}
	return out, nil
}

// Response is the body of a POST /v1/embeddings answer.
type Response struct {
	Object string      `json:"object"` // list
	Data   []Embedding `json:"data"`
	Model  string      `json:"model"`
	Usage  Usage       `json:"usage"`
}

// Embedding is one vector of a Response.
type Embedding struct {
	Object    string `json:"object"` // embedding
	Index     int    `json:"index"`
	Embedding Vector `json:"embedding"`
}

// Vector is an embedding as the wire writes it: an array of numbers, or
// with Base64 the base64 (standard, padded) of its values as
// little-endian float32 bytes, as OpenAI writes it.
type Vector struct {
	Values []float32
	Base64 bool
}

// MarshalJSON writes the array or the base64 string.
func (v Vector) MarshalJSON() ([]byte, error) {
	if !v.Base64 {
		if v.Values == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(v.Values)
	}
	b := make([]byte, 4*len(v.Values))
	for i, x := range v.Values {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return json.Marshal(base64.StdEncoding.EncodeToString(b))
}

// UnmarshalJSON reads either form.
func (v *Vector) UnmarshalJSON(data []byte) error {
	if formats.JSONKind(data) != "string" {
		*v = Vector{}
		return json.Unmarshal(data, &v.Values)
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		return fmt.Errorf("embeddings: an embedding's base64 is not float32 bytes")
	}
	*v = Vector{Values: make([]float32, len(b)/4), Base64: true}
	for i := range v.Values {
		v.Values[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return nil
}

// Usage counts the tokens an embeddings request read.
type Usage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// NewResponse returns the response to req, whose model is the id the
// client named, with the engine's result.
func NewResponse(req Canonical, res inference.EmbedResult) Response {
	out := Response{Object: "list", Data: make([]Embedding, len(res.Embeddings)), Model: req.Request.Model,
		Usage: Usage{PromptTokens: res.Usage.PromptTokens, TotalTokens: res.Usage.PromptTokens}}
	for i, v := range res.Embeddings {
		out.Data[i] = Embedding{Object: "embedding", Index: i, Embedding: Vector{Values: v, Base64: req.Base64}}
	}
	return out
}
