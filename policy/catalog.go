package policy

import (
	"fmt"

	"github.com/inferkit/inferkit/catalog"
)

// The spec's chat model ids: the generation endpoints accept the first
// three, the catalog listing shows the last three.
const (
	Core25Pro  = "core-2-5-pro"
	Core25Mini = "core-2-5-mini"
	Core3Flash = "core-3-flash"
	CoreCode   = "core-code"
	Core       = "core"
	CoreMini   = "core-mini"
)

// The decision model ids (POST /v1/system). The spec names the models but
// not their ids; these are ours.
const (
	// SystemOne340M is the free, open-weight 340M-parameter encoder.
	SystemOne340M = "system-one-340m"
	// SystemOne27B is the 27B multimodal model.
	SystemOne27B = "system-one-27b"
	// SystemOne9B is the faster 9B multimodal model.
	SystemOne9B = "system-one-9b"
)

// chatModel is the spec's size and prices of a chat model, per 1M tokens
// ("Model sizes and prices").
type chatModel struct {
	name, description       string
	context, output         int
	input, output_, cached_ string
}

// chatModels are the spec's table, and the choices for the listing ids,
// which the spec lists without sizes or prices: core-code and core take
// core-2-5-pro's row, core-mini takes core-2-5-mini's. core-2-5-pro's
// context and output are those of its model page (262,000 and 64,000), not
// the pricing page's (200K and 128K).
var chatModels = map[string]chatModel{
	Core25Pro:  {"Core 2.5 Pro", "The most capable chat model: reasoning, tools, structured outputs.", 262000, 64000, "2.00", "8.00", "1.00"},
	Core25Mini: {"Core 2.5 Mini", "A smaller, cheaper chat model with a long context.", 1000000, 128000, "0.50", "2.00", "0.25"},
	Core3Flash: {"Core 3 Flash", "A fast, low-latency model for low-complexity tasks.", 1000000, 128000, "0.30", "0.90", "0.15"},
	CoreCode:   {"Core Code", "The code model of the listing, priced as core-2-5-pro.", 262000, 64000, "2.00", "8.00", "1.00"},
	Core:       {"Core", "The flagship model of the listing, priced as core-2-5-pro.", 262000, 64000, "2.00", "8.00", "1.00"},
	CoreMini:   {"Core Mini", "The small model of the listing, priced as core-2-5-mini.", 1000000, 128000, "0.50", "2.00", "0.25"},
}

// decisionModels are the spec's decision models ("Decision model
// prices"): name, description, price per 1M input tokens, and whether
// they read images.
var decisionModels = map[string]struct {
	name, description, input string
	images                   bool
}{
	SystemOne340M: {"System One 340M", "An open-weight 340M-parameter encoder for typed decisions. Free.", "0", false},
	SystemOne27B:  {"System One 27B", "A 27B multimodal decision model: text, JSON, images and video.", "0.24", true},
	SystemOne9B:   {"System One 9B", "A faster 9B multimodal decision model with the 27B's interface.", "0.09", true},
}

// Model returns the spec's catalog entry for one of its ids, new at each
// call and without Path: a chat model with the spec's name, context and
// output limits, prices per token (input, output and cached input of the
// price table; images, requests and cache writes free, since images are
// billed as input tokens and the prefix cache fills itself), text and
// image input, text output, the features tools and structured_outputs
// (not web_search, which the engine cannot do), and owner "inferkit".
// It reports false for other ids. For the decision ids (SystemOne340M,
// SystemOne27B, SystemOne9B) it returns a decision entry with the spec's
// price per input token.
func Model(id string) (catalog.Model, bool) {
	if m, ok := decisionModel(id); ok {
		return m, true
	}
	s, ok := chatModels[id]
	if !ok {
		return catalog.Model{}, false
	}
	return catalog.Model{
		ID:            id,
		Kind:          catalog.KindChat,
		Name:          s.name,
		Description:   s.description,
		ContextLength: s.context,
		MaxOutput:     s.output,
		Pricing: catalog.Pricing{
			Prompt:           perMillion(s.input),
			Completion:       perMillion(s.output_),
			Image:            "0",
			Request:          "0",
			InputCacheReads:  perMillion(s.cached_),
			InputCacheWrites: "0",
		},
		InputModalities:  []string{"text", "image"},
		OutputModalities: []string{"text"},
		Features:         []string{"tools", "structured_outputs"},
		OwnedBy:          "inferkit",
	}, true
}

// decisionModel is Model for the decision ids: kind decision, the spec's
// price per input token, nothing charged for output (decisions generate
// no tokens), text input and, for the multimodal models, images.
func decisionModel(id string) (catalog.Model, bool) {
	d, ok := decisionModels[id]
	if !ok {
		return catalog.Model{}, false
	}
	in := []string{"text"}
	if d.images {
		in = append(in, "image")
	}
	return catalog.Model{
		ID:          id,
		Kind:        catalog.KindDecision,
		Name:        d.name,
		Description: d.description,
		Pricing: catalog.Pricing{
			Prompt:           perMillion(d.input),
			Completion:       "0",
			Image:            "0",
			Request:          "0",
			InputCacheReads:  perMillion(d.input),
			InputCacheWrites: "0",
		},
		InputModalities:    in,
		OutputModalities:   []string{"text"},
		SamplingParameters: []string{},
		OwnedBy:            "inferkit",
	}, true
}

// perMillion is catalog.PerMillion for the literals of the tables above,
// which TestModel checks; it panics on a malformed literal.
func perMillion(price string) string {
	p, err := catalog.PerMillion(price)
	if err != nil {
		panic(fmt.Sprintf("policy: price table: %v", err))
	}
	return p
}
