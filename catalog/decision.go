package catalog

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

// decisionModels are the spec's decision models: name, description, price
// per 1M input tokens, and whether they read images.
var decisionModels = map[string]struct {
	name, description, input string
	images                   bool
}{
	SystemOne340M: {"System One 340M", "An open-weight 340M-parameter encoder for typed decisions. Free.", "0", false},
	SystemOne27B:  {"System One 27B", "A 27B multimodal decision model: text, JSON, images and video.", "0.24", true},
	SystemOne9B:   {"System One 9B", "A faster 9B multimodal decision model with the 27B's interface.", "0.09", true},
}

// decisionDefaults is Defaults for the decision ids: kind decision, the
// spec's price per input token, nothing charged for output (decisions
// generate no tokens), text input and, for the multimodal models, images.
func decisionDefaults(id string) (Model, bool) {
	d, ok := decisionModels[id]
	if !ok {
		return Model{}, false
	}
	in := []string{"text"}
	if d.images {
		in = append(in, "image")
	}
	return Model{
		ID:          id,
		Kind:        KindDecision,
		Name:        d.name,
		Description: d.description,
		Pricing: Pricing{
			Prompt:           mustPerMillion(d.input),
			Completion:       "0",
			Image:            "0",
			Request:          "0",
			InputCacheReads:  mustPerMillion(d.input),
			InputCacheWrites: "0",
		},
		InputModalities:    in,
		OutputModalities:   []string{"text"},
		SamplingParameters: []string{},
		OwnedBy:            "inferkit",
	}, true
}
