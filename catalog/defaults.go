package catalog

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

// specModel is the spec's size and prices of a model, per 1M tokens.
type specModel struct {
	name, description      string
	context, output        int
	input, output_, cached string
}

// specModels are the spec's table, and the choices for the listing ids,
// which the spec lists without sizes or prices: core-code and core take
// core-2-5-pro's row, core-mini takes core-2-5-mini's. core-2-5-pro's
// context and output are those of its model page (262,000 and 64,000), not
// the pricing page's (200K and 128K).
var specModels = map[string]specModel{
	Core25Pro:  {"Core 2.5 Pro", "The most capable chat model: reasoning, tools, structured outputs.", 262000, 64000, "2.00", "8.00", "1.00"},
	Core25Mini: {"Core 2.5 Mini", "A smaller, cheaper chat model with a long context.", 1000000, 128000, "0.50", "2.00", "0.25"},
	Core3Flash: {"Core 3 Flash", "A fast, low-latency model for low-complexity tasks.", 1000000, 128000, "0.30", "0.90", "0.15"},
	CoreCode:   {"Core Code", "The code model of the listing, priced as core-2-5-pro.", 262000, 64000, "2.00", "8.00", "1.00"},
	Core:       {"Core", "The flagship model of the listing, priced as core-2-5-pro.", 262000, 64000, "2.00", "8.00", "1.00"},
	CoreMini:   {"Core Mini", "The small model of the listing, priced as core-2-5-mini.", 1000000, 128000, "0.50", "2.00", "0.25"},
}

// Defaults returns the spec's entry for one of its ids, without Path: a
// chat model with the spec's name, context and output limits, prices per
// token (input, output and cached input of the price table; images,
// requests and cache writes free, since images are billed as input
// tokens and the prefix cache fills itself), text and image input, text
// output, the features tools and structured_outputs (not web_search,
// which the engine cannot do), and owner "inferkit". It reports false for
// other ids. For the decision ids (SystemOne340M, SystemOne27B,
// SystemOne9B) it returns a decision entry with the spec's price per input
// token.
func Defaults(id string) (Model, bool) {
	if m, ok := decisionDefaults(id); ok {
		return m, true
	}
	s, ok := specModels[id]
	if !ok {
		return Model{}, false
	}
	return Model{
		ID:            id,
		Kind:          KindChat,
		Name:          s.name,
		Description:   s.description,
		ContextLength: s.context,
		MaxOutput:     s.output,
		Pricing: Pricing{
			Prompt:           mustPerMillion(s.input),
			Completion:       mustPerMillion(s.output_),
			Image:            "0",
			Request:          "0",
			InputCacheReads:  mustPerMillion(s.cached),
			InputCacheWrites: "0",
		},
		InputModalities:  []string{"text", "image"},
		OutputModalities: []string{"text"},
		Features:         []string{"tools", "structured_outputs"},
		OwnedBy:          "inferkit",
	}, true
}
