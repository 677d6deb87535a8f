package policy_test

import (
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/policy"
)

func TestModel(t *testing.T) {
	for _, tc := range []struct {
		id                          string
		ctx, out                    int
		prompt, completion, cachedR string
	}{
		{policy.Core25Pro, 262000, 64000, "0.000002", "0.000008", "0.000001"},
		{policy.Core25Mini, 1000000, 128000, "0.0000005", "0.000002", "0.00000025"},
		{policy.Core3Flash, 1000000, 128000, "0.0000003", "0.0000009", "0.00000015"},
		{policy.CoreCode, 262000, 64000, "0.000002", "0.000008", "0.000001"},
		{policy.Core, 262000, 64000, "0.000002", "0.000008", "0.000001"},
		{policy.CoreMini, 1000000, 128000, "0.0000005", "0.000002", "0.00000025"},
	} {
		m, ok := policy.Model(tc.id)
		if !ok {
			t.Fatalf("no defaults for %s", tc.id)
		}
		p := m.Pricing
		if m.ID != tc.id || m.Kind != catalog.KindChat || m.ContextLength != tc.ctx || m.MaxOutput != tc.out ||
			p.Prompt != tc.prompt || p.Completion != tc.completion || p.InputCacheReads != tc.cachedR ||
			p.Image != "0" || p.Request != "0" || p.InputCacheWrites != "0" || m.Name == "" || m.Description == "" {
			t.Errorf("Model(%s) = %+v", tc.id, m)
		}
		m.Path = "x.gguf"
		if err := catalog.Validate([]catalog.Model{m}); err != nil {
			t.Errorf("Model(%s) does not validate: %v", tc.id, err)
		}
	}
	if _, ok := policy.Model("gpt-4"); ok {
		t.Error("Model of an unknown id")
	}
}
