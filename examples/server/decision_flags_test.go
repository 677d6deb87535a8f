package main

import (
	"io"
	"testing"

	"github.com/inferkit/inferkit/catalog"
)

func TestDecisionModelFlag(t *testing.T) {
	o, err := parseFlags([]string{"-decision-model", "system-one-27b=a.gguf", "-decision-model", "judge=b.gguf"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.models) != 2 || o.models[0].Kind != catalog.KindDecision || o.models[0].Pricing.Prompt != "0.00000024" || o.models[0].Path != "a.gguf" ||
		o.models[1].ID != "judge" || o.models[1].Kind != catalog.KindDecision || o.models[1].Path != "b.gguf" {
		t.Errorf("models %+v", o.models)
	}
	for _, arg := range []string{"nopath", "=x.gguf", "id="} {
		if _, err := parseFlags([]string{"-decision-model", arg}, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%q accepted", arg)
		}
	}
}
