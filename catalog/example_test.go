package catalog_test

import (
	"fmt"

	"github.com/inferkit/inferkit/catalog"
)

// The spec's defaults for an id, mapped to a local file and listed with
// the engine's real context.
func ExampleDefaults() {
	m, _ := catalog.Defaults(catalog.Core25Mini)
	m.Path = "models/qwen3-0.6b.gguf"
	o := m.Object(40960)
	fmt.Println(o.ID, o.ContextLength, o.MaxOutputLength, o.Pricing.Prompt, o.Pricing.Completion, o.Pricing.InputCacheReads)
	// Output: core-2-5-mini 40960 40960 0.0000005 0.000002 0.00000025
}
