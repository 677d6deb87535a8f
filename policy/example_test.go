package policy_test

import (
	"fmt"

	"github.com/inferkit/inferkit/policy"
)

// The spec's entry for an id, mapped to a local file and listed with
// the engine's real context.
func ExampleModel() {
	m, _ := policy.Model(policy.Core25Mini)
	m.Path = "models/qwen3-0.6b.gguf"
	o := m.Object(40960)
	fmt.Println(o.ID, o.ContextLength, o.MaxOutputLength, o.Pricing.Prompt, o.Pricing.Completion, o.Pricing.InputCacheReads)
	// Output: core-2-5-mini 40960 40960 0.0000005 0.000002 0.00000025
}
