package catalog

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestPerMillion(t *testing.T) {
	for in, want := range map[string]string{
		"2.00": "0.000002", "8.00": "0.000008", "1.00": "0.000001",
		"0.50": "0.0000005", "2": "0.000002", "0.25": "0.00000025",
		"0.30": "0.0000003", "0.90": "0.0000009", "0.15": "0.00000015",
		"0.24": "0.00000024", "0.09": "0.00000009", "0": "0", "0.000": "0",
		"12": "0.000012", "1234.5": "0.0012345", "1000000": "1", "2500000.5": "2.5000005",
	} {
		got, err := PerMillion(in)
		if err != nil || got != want {
			t.Errorf("PerMillion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1e-6", "1.", ".5", "1,5", "abc"} {
		if _, err := PerMillion(bad); err == nil {
			t.Errorf("PerMillion(%q) accepted", bad)
		}
	}
}

func TestObject(t *testing.T) {
	m := Model{ID: "core-2-5-pro", Path: "x.gguf", ContextLength: 262000, MaxOutput: 64000} // the spec's bounds
	for _, tc := range []struct {
		runtime, ctx, out int
	}{
		{32768, 32768, 32768},    // the engine holds less than the spec promises
		{1 << 20, 262000, 64000}, // the spec's bound holds
		{100000, 100000, 64000},  // output within context
		{0, 262000, 64000},       // unknown runtime: the configured bound
	} {
		o := m.Object(tc.runtime)
		if o.ContextLength != tc.ctx || o.MaxOutputLength != tc.out {
			t.Errorf("Object(%d): context %d, output %d; want %d, %d", tc.runtime, o.ContextLength, o.MaxOutputLength, tc.ctx, tc.out)
		}
	}
	bare := Model{ID: "local", Path: "x.gguf"}
	o := bare.Object(4096)
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"id":"local"`, `"name":"local"`, `"object":"model"`, `"input_modalities":["text"]`,
		`"output_modalities":["text"]`, `"context_length":4096`, `"max_output_length":4096`, `"supported_features":[]`,
		`"supported_sampling_parameters":["temperature"`, `"openrouter":{"slug":"inferkit/local"}`, `"datacenters":[]`,
		`"owned_by":"inferkit"`, `"pricing":{"prompt":"0","completion":"0","image":"0","request":"0","input_cache_reads":"0","input_cache_writes":"0"}`,
		`"created":0`, `"description":""`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("object lacks %s: %s", field, b)
		}
	}
}

// An entry's datacenters and creation time are the object's, in the
// spec's shapes.
func TestObjectDatacenters(t *testing.T) {
	m := Model{ID: "a", Path: "a.gguf", Datacenters: []string{"US", "DE"}, Created: 1_767_225_600}
	b, err := json.Marshal(m.Object(4096))
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"datacenters":[{"country_code":"US"},{"country_code":"DE"}]`, `"created":1767225600`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("object lacks %s: %s", field, b)
		}
	}
}

func TestEmbeddingObject(t *testing.T) {
	m := Model{ID: "emb", Path: "e.gguf", Kind: KindEmbedding, MinDimensions: 32}
	o := m.Object(8192)
	o.Dimensions = 1024
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"type":"embedding"`, `"dimensions":1024`, `"min_dimensions":32`, `"output_modalities":["embeddings"]`,
		`"max_output_length":0`, `"context_length":8192`, `"supported_sampling_parameters":[]`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("object lacks %s: %s", field, b)
		}
	}
	chat, _ := json.Marshal(Model{ID: "c", Path: "c"}.Object(10))
	if strings.Contains(string(chat), `"type"`) || strings.Contains(string(chat), `dimensions"`) {
		t.Errorf("a chat object with embedding fields: %s", chat)
	}
	if err := Validate([]Model{m}); err != nil {
		t.Error(err)
	}
}

func TestInputModalities(t *testing.T) {
	for _, tc := range []struct {
		m    Model
		want string
	}{
		{Model{ID: "a", Path: "a"}, "text"},
		{Model{ID: "a", Path: "a", Projector: "p"}, "text,image"},
		{Model{ID: "a", Path: "a", Projector: "p", InputModalities: []string{"image"}}, "image"},
		{Model{ID: "a", Path: "a", InputModalities: []string{"text", "audio"}}, "text,audio"},
	} {
		if got := strings.Join(tc.m.Object(0).InputModalities, ","); got != tc.want {
			t.Errorf("%+v: input modalities %s, want %s", tc.m, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Model{ID: "a", Path: "a.gguf"}
	for _, tc := range []struct {
		name   string
		models []Model
		want   string
	}{
		{"no id", []Model{{Path: "x"}}, "no id"},
		{"no path", []Model{{ID: "a"}}, "no path"},
		{"duplicate", []Model{ok, {ID: "b", Aliases: []string{"a"}, Path: "b"}}, "used twice"},
		{"kind", []Model{{ID: "a", Path: "a", Kind: "vision"}}, "kind"},
		{"price", []Model{{ID: "a", Path: "a", Pricing: Pricing{Prompt: "2e-6"}}}, "decimal"},
		{"limit", []Model{{ID: "a", Path: "a", MaxOutput: -1}}, "negative"},
		{"dimensions", []Model{{ID: "a", Path: "a", Kind: KindEmbedding, MinDimensions: -1}}, "MinDimensions"},
		{"dimensions of a chat model", []Model{{ID: "a", Path: "a", MinDimensions: 32}}, "MinDimensions"},
		{"unassigned country", []Model{{ID: "a", Path: "a", Datacenters: []string{"US", "XX"}}}, `datacenter "XX" is not an ISO 3166-1 alpha-2`},
		{"lower case", []Model{{ID: "a", Path: "a", Datacenters: []string{"de"}}}, `datacenter "de"`},
		{"three letters", []Model{{ID: "a", Path: "a", Datacenters: []string{"USA"}}}, `datacenter "USA"`},
		{"across two codes", []Model{{ID: "a", Path: "a", Datacenters: []string{"DA"}}}, `datacenter "DA"`},
		{"empty", []Model{{ID: "a", Path: "a", Datacenters: []string{""}}}, `datacenter ""`},
		{"twice", []Model{{ID: "a", Path: "a", Datacenters: []string{"DE", "DE"}}}, `"DE" is listed twice`},
		{"created", []Model{{ID: "a", Path: "a", Created: -1}}, "before 1970"},
		{"remote with a file", []Model{{ID: "a", Path: "a", Remote: &Remote{URLs: []string{"http://u/v1"}}}}, "names a file too"},
		{"remote without URLs", []Model{{ID: "a", Remote: &Remote{}}}, "no URLs"},
		{"remote URL", []Model{{ID: "a", Remote: &Remote{URLs: []string{"u:8000"}}}}, "not http or https"},
		{"remote context", []Model{{ID: "a", Remote: &Remote{URLs: []string{"http://u/v1"}, ContextLength: -1}}}, "context length"},
		{"remote embedding", []Model{{ID: "a", Kind: KindEmbedding, Remote: &Remote{URLs: []string{"http://u/v1"}}}}, "remote entries chat and decide"},
	} {
		err := Validate(tc.models)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if err := Validate([]Model{ok, {ID: "r", Kind: KindDecision, Remote: &Remote{URLs: []string{"https://u/v1", "http://v:8000/v1"}}}}); err != nil {
		t.Error(err)
	}
	if err := Validate([]Model{ok, {ID: "b", Aliases: []string{"c"}, Path: "a.gguf", Datacenters: []string{"US", "DE", "ZW", "AD"}}}); err != nil {
		t.Error(err)
	}
	if err := Validate([]Model{ok, ok}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
	if m, found := Lookup([]Model{ok, {ID: "b", Aliases: []string{"c"}, Path: "b"}}, "c"); !found || m.ID != "b" {
		t.Errorf("Lookup = %+v, %v", m, found)
	}
}

// A reranker's object says its type, and promises no output tokens and
// no sampling parameters.
func TestRerankObject(t *testing.T) {
	b, err := json.Marshal(Model{ID: "rr", Path: "r.gguf", Kind: KindRerank}.Object(512))
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"type":"rerank"`, `"max_output_length":0`, `"supported_sampling_parameters":[]`, `"output_modalities":["relevance_scores"]`, `"context_length":512`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("object lacks %s: %s", field, b)
		}
	}
	if err := Validate([]Model{{ID: "rr", Path: "r.gguf", Kind: KindRerank}}); err != nil {
		t.Error(err)
	}
}
