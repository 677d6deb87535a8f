package formats

import (
	"github.com/inferkit/inferkit/catalog"
)

// ModelList is the body of GET /v1/models.
type ModelList struct {
	Object string           `json:"object"` // list
	Data   []catalog.Object `json:"data"`
	// Models lists the decision models in System One's shape, for its
	// SDKs, which read the same path; OpenAI's and Anthropic's ignore it.
	Models []SystemOneModel `json:"models,omitzero"`
}

// NewModelList returns the list of the objects, in their order.
func NewModelList(objects []catalog.Object) ModelList {
	if objects == nil {
		objects = []catalog.Object{}
	}
	return ModelList{Object: "list", Data: objects}
}
