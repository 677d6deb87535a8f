package rerank

import (
	"cmp"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/inferkit/inferkit/formats"
)

// Limits of a request.
const (
	// MaxDocuments bounds the documents of one request.
	MaxDocuments = 1000
	// MaxChars bounds the query and each document, in characters.
	MaxChars = 100_000
)

// Request is the body of POST /v1/rerank.
type Request struct {
	// Model is required.
	Model string `json:"model"`
	// Query is what the documents are ranked against; required.
	Query string `json:"query"`
	// Documents are 1 to MaxDocuments texts to rank: on the wire each
	// is a string or an object {"text": ...}.
	Documents []Document `json:"documents"`
	// TopN, when set, keeps the TopN most relevant results (all when it
	// exceeds the documents); at least 1.
	TopN *int `json:"top_n,omitzero"`
	// ReturnDocuments, when false, leaves the documents out of the
	// results; absent means true.
	ReturnDocuments *bool `json:"return_documents,omitzero"`
}

// Document is one document: its text. On the wire it is a string, or an
// object with a string "text" and no other field.
type Document struct {
	Text string `json:"text"`
	// object records that the wire value was an object, so that errors
	// name its text as documents[i].text.
	object bool
}

// fields are the request's fields: any other is refused.
var fields = []string{"model", "query", "documents", "top_n", "return_documents"}

// Parse decodes and checks a rerank request body: a model, a query and 1
// to MaxDocuments documents, none empty nor longer than MaxChars
// characters, top_n of at least 1, and no field beyond the shape's. It
// fails with a *formats.RequestError naming the parameter, such as
// documents[3] or top_n.
func Parse(body []byte) (Canonical, error) {
	var raw map[string]json.RawMessage
	if err := formats.Decode(body, &raw); err != nil {
		return Canonical{}, err
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(fields, k) {
			return Canonical{}, formats.Invalid(k, "%s: unknown parameter; POST /v1/rerank takes model, query, documents, top_n and return_documents", clip(k))
		}
	}
	var w struct {
		Model           string          `json:"model"`
		Query           string          `json:"query"`
		Documents       json.RawMessage `json:"documents"`
		TopN            *int            `json:"top_n"`
		ReturnDocuments *bool           `json:"return_documents"`
	}
	if err := formats.Decode(body, &w); err != nil {
		return Canonical{}, err
	}
	r := Request{Model: w.Model, Query: w.Query, TopN: w.TopN, ReturnDocuments: w.ReturnDocuments}
	switch kind := formats.JSONKind(w.Documents); kind {
	case "nothing", "null":
	case "array":
		var items []json.RawMessage
		if err := json.Unmarshal(w.Documents, &items); err != nil {
			return Canonical{}, formats.TypeError("documents", kind, "array")
		}
		r.Documents = make([]Document, len(items))
		for i, item := range items {
			if err := r.Documents[i].read(i, item); err != nil {
				return Canonical{}, err
			}
		}
	default:
		return Canonical{}, formats.TypeError("documents", kind, "array")
	}
	return r.Canonical()
}

// UnmarshalJSON reads a string or an object with a text; Parse reads
// documents itself, to name the one at fault.
func (d *Document) UnmarshalJSON(data []byte) error { return d.read(-1, data) }

// read reads document i from its wire value.
func (d *Document) read(i int, data []byte) error {
	param := "documents[]"
	if i >= 0 {
		param = fmt.Sprintf("documents[%d]", i)
	}
	*d = Document{}
	switch kind := formats.JSONKind(data); kind {
	case "string":
		return json.Unmarshal(data, &d.Text)
	case "object":
	default:
		return formats.TypeError(param, kind, "string or object with a text")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return formats.TypeError(param, "object", "string or object with a text")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k != "text" {
			return formats.Invalid(param+"."+k, "%s.%s: unknown field; a document is a string or an object with a text only", param, clip(k))
		}
	}
	text, ok := obj["text"]
	if !ok {
		return formats.Missing(param + ".text")
	}
	if kind := formats.JSONKind(text); kind != "string" {
		return formats.TypeError(param+".text", kind, "string")
	}
	d.object = true
	return json.Unmarshal(text, &d.Text)
}

// MarshalJSON writes the document as the object {"text": ...}.
func (d Document) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Text string `json:"text"`
	}{d.Text})
}

// Canonical is a checked rerank request.
type Canonical struct {
	// Model is the model the client named.
	Model string
	// Query is the query.
	Query string
	// Documents are the documents' texts, in the request's order.
	Documents []string
	// TopN is how many results to return: the number of documents when
	// the request set none or more.
	TopN int
	// ReturnDocuments says the results carry their documents.
	ReturnDocuments bool
}

// Canonical checks r and returns what it asks for.
func (r *Request) Canonical() (Canonical, error) {
	switch {
	case r.Model == "":
		return Canonical{}, formats.Missing("model")
	case r.Query == "":
		return Canonical{}, formats.Missing("query")
	case utf8.RuneCountInString(r.Query) > MaxChars:
		return Canonical{}, formats.Invalid("query", "query: longer than %d characters", MaxChars)
	case r.Documents == nil:
		return Canonical{}, formats.Missing("documents")
	case len(r.Documents) == 0 || len(r.Documents) > MaxDocuments:
		return Canonical{}, formats.Invalid("documents", "documents: %d of them; want 1 to %d", len(r.Documents), MaxDocuments)
	}
	c := Canonical{Model: r.Model, Query: r.Query, Documents: make([]string, len(r.Documents)), TopN: len(r.Documents), ReturnDocuments: true}
	for i, d := range r.Documents {
		param := fmt.Sprintf("documents[%d]", i)
		if d.object {
			param += ".text"
		}
		switch {
		case d.Text == "":
			return Canonical{}, formats.Invalid(param, "%s: empty; every document needs at least one character", param)
		case utf8.RuneCountInString(d.Text) > MaxChars:
			return Canonical{}, formats.Invalid(param, "%s: longer than %d characters", param, MaxChars)
		}
		c.Documents[i] = d.Text
	}
	if r.TopN != nil {
		if *r.TopN < 1 {
			return Canonical{}, formats.Invalid("top_n", "top_n: %d; want at least 1", *r.TopN)
		}
		c.TopN = min(*r.TopN, len(r.Documents))
	}
	if r.ReturnDocuments != nil {
		c.ReturnDocuments = *r.ReturnDocuments
	}
	return c, nil
}

// clip shortens a name quoted in an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Response is the body of a POST /v1/rerank answer.
type Response struct {
	// ID identifies the answer: "rerank-" and random letters.
	ID string `json:"id"`
	// Object is always "list".
	Object string `json:"object"`
	// Model is the model the client named.
	Model string `json:"model"`
	// Results are the TopN most relevant documents, most relevant first.
	Results []Result `json:"results"`
	// Usage counts the tokens the model read.
	Usage Usage `json:"usage"`
}

// Result is one ranked document.
type Result struct {
	// Index is the document's place in the request's documents.
	Index int `json:"index"`
	// RelevanceScore is between 0 and 1, higher for more relevant.
	RelevanceScore float64 `json:"relevance_score"`
	// Document is the document, unless return_documents was false.
	Document *Document `json:"document,omitzero"`
}

// Usage counts the tokens a rerank request read: nothing is generated.
type Usage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// NewResponse returns the answer to req from one score per document, in
// the request's order, and the tokens read: the TopN highest scores,
// highest first, ties in the request's order.
func NewResponse(req Canonical, scores []float64, promptTokens int) Response {
	out := Response{ID: "rerank-" + rand.Text(), Object: "list", Model: req.Model,
		Usage: Usage{PromptTokens: promptTokens, TotalTokens: promptTokens}}
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	for _, i := range order[:min(req.TopN, len(order))] {
		r := Result{Index: i, RelevanceScore: scores[i]}
		if req.ReturnDocuments && i < len(req.Documents) {
			r.Document = &Document{Text: req.Documents[i]}
		}
		out.Results = append(out.Results, r)
	}
	if out.Results == nil {
		out.Results = []Result{}
	}
	return out
}
