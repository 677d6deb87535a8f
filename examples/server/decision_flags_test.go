package main

import (
	"io"
	"slices"
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

func TestProjectorFlag(t *testing.T) {
	o, err := parseFlags([]string{"-decision-model", "system-one-9b=m.gguf", "-projector", "system-one-9b=mmproj.gguf", "-decision-model", "system-one-27b=b.gguf"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.models[0].Projector != "mmproj.gguf" || !slices.Contains(o.models[0].InputModalities, "image") {
		t.Errorf("with a projector: %+v", o.models[0])
	}
	if o.models[1].Projector != "" || slices.Contains(o.models[1].InputModalities, "image") {
		t.Errorf("without a projector, the listing still says it reads images: %+v", o.models[1])
	}
	for _, args := range [][]string{{"-projector", "x"}, {"-projector", "=p"}, {"-projector", "nobody=p.gguf"}} {
		if _, err := parseFlags(args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

func TestCalibrationFlag(t *testing.T) {
	o, err := parseFlags([]string{"-decision-model", "judge=b.gguf", "-calibration", "judge=1.5"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.models[0].Calibration != 1.5 {
		t.Errorf("calibration %v, want 1.5", o.models[0].Calibration)
	}
	for _, args := range [][]string{{"-calibration", "judge=0"}, {"-calibration", "judge=-1"}, {"-calibration", "judge=x"}, {"-calibration", "=1"},
		{"-decision-model", "judge=b.gguf", "-calibration", "nobody=1.5"}, {"-model", "chat=c.gguf", "-calibration", "chat=1.5"}} {
		if _, err := parseFlags(args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

func TestEmbeddingModelFlag(t *testing.T) {
	o, err := parseFlags([]string{"-embedding-model", "qwen-embed=q.gguf", "-min-dimensions", "qwen-embed=32", "-embedding-model", "bge=b.gguf"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.models) != 2 || o.models[0].Kind != catalog.KindEmbedding || o.models[0].Path != "q.gguf" || o.models[0].MinDimensions != 32 ||
		o.models[1].ID != "bge" || o.models[1].Kind != catalog.KindEmbedding || o.models[1].MinDimensions != 0 {
		t.Errorf("models %+v", o.models)
	}
	for _, args := range [][]string{{"-embedding-model", "nopath"}, {"-embedding-model", "=x.gguf"}, {"-embedding-model", "id="},
		{"-min-dimensions", "x=0"}, {"-min-dimensions", "x=y"}, {"-embedding-model", "e=e.gguf", "-min-dimensions", "nobody=8"},
		{"-model", "chat=c.gguf", "-min-dimensions", "chat=8"}} {
		if _, err := parseFlags(args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
