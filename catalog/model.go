package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Kind says what a model is for.
type Kind string

// The kinds of models.
const (
	// KindChat generates text: chat completions, messages, responses. The
	// zero Kind means KindChat.
	KindChat Kind = "chat"
	// KindDecision answers typed questions over a state (/v1/system).
	KindDecision Kind = "decision"
	// KindEmbedding turns texts into vectors (/v1/embeddings): a GGUF
	// whose pooling type is mean, cls or last.
	KindEmbedding Kind = "embedding"
	// KindRerank scores documents against a query (/v1/rerank): a
	// reranker GGUF (rank pooling), such as a BERT-family
	// cross-encoder. Chat and decision entries rerank too.
	KindRerank Kind = "rerank"
)

// Model is one entry of the catalog: an id and its aliases naming a GGUF
// file, and what GET /v1/models says of it. Several entries may name the
// same file; an engine loads it once. The zero value is not valid: ID and
// Path are required; every other field's zero value is documented and
// useful. Package policy's Model gives the hosted product's entries.
type Model struct {
	// ID is the name requests use, such as "core-2-5-mini".
	ID string
	// Aliases are further names for the same entry.
	Aliases []string
	// Path is the GGUF file; empty for a Remote entry.
	Path string
	// Remote, when set, serves the entry from an inference cluster
	// instead of a file: see Remote. Path, Projector and Draft are then
	// empty.
	Remote *Remote
	// Projector is the multimodal projector GGUF ("mmproj") that lets the
	// model read images; empty means text only. Entries that share Path
	// share one projector too, so they must name the same one or none.
	Projector string
	// Draft is a smaller GGUF of the same vocabulary that drafts tokens
	// for this model to verify (speculative decoding, see
	// inference.Config.Draft); empty means none. Entries that share Path
	// must name the same draft model or none.
	Draft string

	// Kind is chat (the zero value), decision, embedding or rerank.
	Kind Kind
	// MinDimensions is, for an embedding model trained to be truncated
	// (Matryoshka representation learning, such as Qwen3-Embedding or
	// nomic-embed-text-v1.5), the fewest dimensions a request may ask
	// for: requests may then ask for any number from it to the model's
	// full size. 0 means the model was not trained for it, and a request
	// may ask for its full size only. Embedding entries only.
	MinDimensions int
	// Calibration is a decision model's temperature: its options'
	// log-probabilities are divided by it before the softmax (above 1
	// flattens an overconfident model). 0 means 1.
	Calibration float64
	// Name is a human-readable name; empty means the id.
	Name string
	// Description says what the model is good at.
	Description string
	// ContextLength bounds the context the listing promises, in tokens;
	// the listing gives the smaller of it and the engine's real
	// per-sequence context. 0 means the engine's.
	ContextLength int
	// MaxOutput bounds the tokens of one answer; 0 means the context
	// length. The listing never gives more than the context length.
	MaxOutput int
	// Pricing is in USD per unit, as exact decimal strings.
	Pricing Pricing
	// InputModalities are such as "text" and "image"; nil means text, or
	// text and image when Projector is set.
	InputModalities []string
	// OutputModalities are such as "text"; nil means text.
	OutputModalities []string
	// SamplingParameters are the request parameters the model honours;
	// nil means every one the engine supports (see SamplingParameters).
	SamplingParameters []string
	// Features are such as "tools" and "structured_outputs".
	Features []string
	// OpenRouterSlug is the model's name on OpenRouter, "<vendor>/<name>";
	// empty means "inferkit/<id>".
	OpenRouterSlug string
	// Datacenters are the countries where the model runs, as ISO 3166-1
	// alpha-2 codes in upper case, such as "US" and "DE" (each once),
	// listed as the spec's datacenters[].country_code; nil lists none.
	// Validate refuses any other code.
	Datacenters []string
	// Created is when the model was made, in Unix seconds: the listing's
	// created. 0 means the modification time of the file at Path, which
	// httpapi reads when it starts (and 0 when the file cannot be read).
	Created int64
	// OwnedBy is the owning organization; empty means "inferkit".
	OwnedBy string
}

// Remote is where an entry's model runs when it runs on an existing
// inference engine (vLLM, SGLang, llama.cpp's server, Ollama, another
// inferkit): replicas that speak the OpenAI-compatible chat completions
// API. inferkit keeps everything above the engine (keys, limits, the
// wire styles, decisions, search and MCP turns, stored responses); the
// upstream renders the chat template and counts the tokens.
type Remote struct {
	// URLs are the base URLs of the upstream's replicas, such as
	// "http://10.0.0.5:8000/v1", at least one: requests go to the least
	// loaded healthy one, keeping requests that share a prompt prefix
	// on one replica (see package inference).
	URLs []string
	// Model is the upstream's name of the model; empty means the
	// entry's ID.
	Model string
	// Key is the upstream's bearer key; empty sends none.
	Key string
	// ContextLength is the upstream model's context in tokens: the
	// bound that requests are checked against, on an estimate of their
	// prompt, before they are sent. 0 means DefaultRemoteContext.
	ContextLength int
}

// DefaultRemoteContext is a Remote's context when it names none.
const DefaultRemoteContext = 8192

// Pricing is what a model costs, in USD, as decimal strings such as
// "0.000002" (exact, never formatted from a float). Empty means "0".
type Pricing struct {
	// Prompt is per prompt token.
	Prompt string
	// Completion is per generated token.
	Completion string
	// Image is per input image.
	Image string
	// Request is per request.
	Request string
	// InputCacheReads is per prompt token read from the prefix cache.
	InputCacheReads string
	// InputCacheWrites is per prompt token written to the cache.
	InputCacheWrites string
}

// SamplingParameters are the sampling parameters the engine honours, the
// default of Model.SamplingParameters.
var SamplingParameters = []string{"temperature", "top_p", "top_k", "repetition_penalty",
	"frequency_penalty", "presence_penalty", "seed", "stop"}

// Validate reports the first problem of a list of entries: a missing id or
// path, a name used twice, an unknown kind, a price that is not a
// decimal, a creation time before 1970, or a datacenter that is not an
// ISO 3166-1 alpha-2 code (the error names it).
func Validate(models []Model) error {
	seen := map[string]bool{}
	for i, m := range models {
		if m.ID == "" {
			return fmt.Errorf("catalog: model %d has no id", i)
		}
		switch {
		case m.Remote != nil:
			if err := m.Remote.check(m); err != nil {
				return err
			}
		case m.Path == "":
			return fmt.Errorf("catalog: model %q has no path", m.ID)
		}
		for _, name := range append([]string{m.ID}, m.Aliases...) {
			if name == "" {
				return fmt.Errorf("catalog: model %q has an empty alias", m.ID)
			}
			if seen[name] {
				return fmt.Errorf("catalog: %w: %q", ErrDuplicate, name)
			}
			seen[name] = true
		}
		if m.Calibration < 0 {
			return fmt.Errorf("catalog: model %q has calibration %v; it must be positive, or 0 for 1", m.ID, m.Calibration)
		}
		if m.Kind != "" && m.Kind != KindChat && m.Kind != KindDecision && m.Kind != KindEmbedding && m.Kind != KindRerank {
			return fmt.Errorf("catalog: model %q has unknown kind %q", m.ID, m.Kind)
		}
		if m.MinDimensions < 0 || (m.MinDimensions > 0 && m.Kind != KindEmbedding) {
			return fmt.Errorf("catalog: model %q has MinDimensions %d; it must be positive, on an embedding entry, or 0", m.ID, m.MinDimensions)
		}
		if m.ContextLength < 0 || m.MaxOutput < 0 {
			return fmt.Errorf("catalog: model %q has a negative limit", m.ID)
		}
		if m.Created < 0 {
			return fmt.Errorf("catalog: model %q has created %d, before 1970", m.ID, m.Created)
		}
		if err := checkDatacenters(m.ID, m.Datacenters); err != nil {
			return err
		}
		p := m.Pricing
		for _, price := range []string{p.Prompt, p.Completion, p.Image, p.Request, p.InputCacheReads, p.InputCacheWrites} {
			if price != "" && !isDecimal(price) {
				return fmt.Errorf("catalog: model %q has price %q, not a decimal", m.ID, price)
			}
		}
	}
	return nil
}

// check reports what is wrong with the Remote of entry m.
func (r *Remote) check(m Model) error {
	switch {
	case m.Path != "" || m.Projector != "" || m.Draft != "":
		return fmt.Errorf("catalog: model %q is remote, and names a file too", m.ID)
	case len(r.URLs) == 0:
		return fmt.Errorf("catalog: model %q is remote, with no URLs", m.ID)
	case r.ContextLength < 0:
		return fmt.Errorf("catalog: model %q has a remote context length of %d", m.ID, r.ContextLength)
	case m.Kind == KindEmbedding || m.Kind == KindRerank:
		return fmt.Errorf("catalog: model %q is a remote %s model: remote entries chat and decide", m.ID, m.Kind)
	}
	for _, u := range r.URLs {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("catalog: model %q has remote URL %q, not http or https", m.ID, u)
		}
	}
	return nil
}

// ErrDuplicate means two entries share an id or alias.
var ErrDuplicate = errors.New("model name used twice")

// Lookup returns the entry whose id or alias is name.
func Lookup(models []Model, name string) (Model, bool) {
	for _, m := range models {
		if m.ID == name || slices.Contains(m.Aliases, name) {
			return m, true
		}
	}
	return Model{}, false
}

// inputModalities is InputModalities with its default.
func (m Model) inputModalities() []string {
	switch {
	case m.InputModalities != nil:
		return slices.Clone(m.InputModalities)
	case m.Projector != "":
		return []string{"text", "image"}
	}
	return []string{"text"}
}
