package catalog

import "slices"

// Object is a model as GET /v1/models and GET /v1/models/{id} show it,
// with every field of the spec's model object.
type Object struct {
	ID                          string       `json:"id"`
	Name                        string       `json:"name"`
	Description                 string       `json:"description"`
	Object                      string       `json:"object"` // model
	InputModalities             []string     `json:"input_modalities"`
	OutputModalities            []string     `json:"output_modalities"`
	ContextLength               int          `json:"context_length"`
	MaxOutputLength             int          `json:"max_output_length"`
	SupportedSamplingParameters []string     `json:"supported_sampling_parameters"`
	SupportedFeatures           []string     `json:"supported_features"`
	OpenRouter                  OpenRouter   `json:"openrouter"`
	Datacenters                 []Datacenter `json:"datacenters"`
	Created                     int64        `json:"created"`
	OwnedBy                     string       `json:"owned_by"`
	Pricing                     PricingJSON  `json:"pricing"`
	// Type is "embedding" for an embedding model, "rerank" for a
	// reranker, and absent for the spec's chat models, whose object has
	// no such field.
	Type string `json:"type,omitzero"`
	// Dimensions is the length of an embedding model's vectors; absent
	// for other models. The caller sets it from the engine's figure.
	Dimensions int `json:"dimensions,omitzero"`
	// MinDimensions is the fewest dimensions an embedding request may ask
	// for (Model.MinDimensions); absent when the model takes its full
	// size only.
	MinDimensions int `json:"min_dimensions,omitzero"`
}

// OpenRouter is the model's entry on the OpenRouter model router.
type OpenRouter struct {
	Slug string `json:"slug"`
}

// Datacenter is where a model runs.
type Datacenter struct {
	CountryCode string `json:"country_code"`
}

// PricingJSON is a model's pricing as the listing writes it: decimal
// strings in USD per unit.
type PricingJSON struct {
	Prompt           string `json:"prompt"`
	Completion       string `json:"completion"`
	Image            string `json:"image"`
	Request          string `json:"request"`
	InputCacheReads  string `json:"input_cache_reads"`
	InputCacheWrites string `json:"input_cache_writes"`
}

// Object returns the model object of m, served with contextLength tokens
// of context per sequence (the engine's real figure, from the GGUF and
// its configuration): the listing promises no more context than that and
// no more output than the context. An embedding model's object says so
// (type "embedding", output modality "embeddings" unless the entry names
// others), and promises no output tokens and no sampling parameters; a
// reranker's likewise (type "rerank", output modality
// "relevance_scores").
func (m Model) Object(contextLength int) Object {
	ctx := contextLength
	if m.ContextLength > 0 && (ctx <= 0 || m.ContextLength < ctx) {
		ctx = m.ContextLength
	}
	if ctx < 0 {
		ctx = 0
	}
	out := m.MaxOutput
	if out <= 0 || out > ctx {
		out = ctx
	}
	o := Object{
		ID:                          m.ID,
		Name:                        orDefault(m.Name, m.ID),
		Description:                 m.Description,
		Object:                      "model",
		InputModalities:             m.inputModalities(),
		OutputModalities:            orText(m.OutputModalities),
		ContextLength:               ctx,
		MaxOutputLength:             out,
		SupportedSamplingParameters: slices.Clone(m.SamplingParameters),
		SupportedFeatures:           slices.Clone(m.Features),
		OpenRouter:                  OpenRouter{Slug: orDefault(m.OpenRouterSlug, "inferkit/"+m.ID)},
		Datacenters:                 []Datacenter{},
		Created:                     m.Created,
		OwnedBy:                     orDefault(m.OwnedBy, "inferkit"),
		Pricing: PricingJSON{
			Prompt:           orDefault(m.Pricing.Prompt, "0"),
			Completion:       orDefault(m.Pricing.Completion, "0"),
			Image:            orDefault(m.Pricing.Image, "0"),
			Request:          orDefault(m.Pricing.Request, "0"),
			InputCacheReads:  orDefault(m.Pricing.InputCacheReads, "0"),
			InputCacheWrites: orDefault(m.Pricing.InputCacheWrites, "0"),
		},
	}
	if m.Kind == KindEmbedding {
		o.Type = string(KindEmbedding)
		o.MaxOutputLength = 0
		o.MinDimensions = m.MinDimensions
		if m.OutputModalities == nil {
			o.OutputModalities = []string{"embeddings"}
		}
		if o.SupportedSamplingParameters == nil {
			o.SupportedSamplingParameters = []string{}
		}
	}
	if m.Kind == KindRerank {
		o.Type = string(KindRerank)
		o.MaxOutputLength = 0
		if m.OutputModalities == nil {
			o.OutputModalities = []string{"relevance_scores"}
		}
		if o.SupportedSamplingParameters == nil {
			o.SupportedSamplingParameters = []string{}
		}
	}
	if o.SupportedSamplingParameters == nil {
		o.SupportedSamplingParameters = slices.Clone(SamplingParameters)
	}
	if o.SupportedFeatures == nil {
		o.SupportedFeatures = []string{}
	}
	for _, c := range m.Datacenters {
		o.Datacenters = append(o.Datacenters, Datacenter{CountryCode: c})
	}
	return o
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// orText returns a copy of m, or ["text"] when m is nil.
func orText(m []string) []string {
	if m == nil {
		return []string{"text"}
	}
	return slices.Clone(m)
}
