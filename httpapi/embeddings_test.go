package httpapi_test

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats/embeddings"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/ratelimit"
)

// withEmbeddings adds to the fake engine two embedding models of 4
// dimensions, "embed" (catalogued without truncation, alias "e") and
// "matry" (catalogued with MinDimensions 2), and catalogues them.
func withEmbeddings(cfg *httpapi.Config, f *fakeEngine) {
	f.models = append(f.models,
		inference.ModelInfo{ID: "embed", Aliases: []string{"e"}, Path: "/m/e.gguf", ContextLength: 512, Embedding: true, Pooling: "mean", Dimensions: 4},
		inference.ModelInfo{ID: "matry", Path: "/m/q.gguf", ContextLength: 8192, Embedding: true, Pooling: "last", Dimensions: 4},
	)
	cfg.Models = append(cfg.Models,
		catalog.Model{ID: "embed", Aliases: []string{"e"}, Path: "/m/e.gguf", Kind: catalog.KindEmbedding, Pricing: catalog.Pricing{Prompt: "0.0000001"}},
		catalog.Model{ID: "matry", Path: "/m/q.gguf", Kind: catalog.KindEmbedding, MinDimensions: 2},
	)
}

func TestEmbeddings(t *testing.T) {
	e := newEnv(t, withEmbeddings)
	w := do(e.h, "POST", "/v1/embeddings", key, `{"model":"e","input":["one two","three"]}`)
	if w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	var res embeddings.Response
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Object != "list" || res.Model != "e" || len(res.Data) != 2 || res.Data[1].Index != 1 || res.Data[1].Object != "embedding" ||
		res.Data[1].Embedding.Values[1] != 1 || res.Usage.PromptTokens != 7 || res.Usage.TotalTokens != 7 {
		t.Errorf("response %s", w.Body)
	}
	if got := e.eng.embeds[0]; got.Model != "embed" || len(got.Input) != 2 {
		t.Errorf("engine request %+v: the catalog id, both inputs", got)
	}
	w = do(e.h, "POST", "/v1/embeddings", key, `{"model":"embed","input":[[5,6,7]],"encoding_format":"base64"}`)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"embedding":"AACAPwAAAAAAAAAAAAAAAA=="`) {
		t.Errorf("base64: %d %s", w.Code, w.Body)
	}
	w = do(e.h, "POST", "/v1/embeddings", key, `{"model":"matry","input":"x","dimensions":2}`)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"embedding":[1,0]`) {
		t.Errorf("matryoshka: %d %s", w.Code, w.Body)
	}
	for _, c := range []struct {
		body, param, code string
	}{
		{`{"model":"embed","input":"x","dimensions":2}`, "dimensions", "invalid_value"},
		{`{"model":"matry","input":"x","dimensions":1}`, "dimensions", "invalid_value"},
		{`{"model":"matry","input":"x","dimensions":5}`, "dimensions", "invalid_value"},
		{`{"model":"core-2-5-mini","input":"x"}`, "model", "model_not_found"},
		{`{"model":"judge","input":"x"}`, "model", "model_not_found"},
		{`{"model":"nope","input":"x"}`, "model", "model_not_found"},
		{`{"model":"embed","input":[]}`, "input", "invalid_value"},
		{`{"model":"embed","input":["a",""]}`, "input[1]", "invalid_value"},
		{`{"model":"embed","input":[[1],["a"]]}`, "input[1][0]", "invalid_type"},
	} {
		w := do(e.h, "POST", "/v1/embeddings", key, c.body)
		var body struct {
			Error struct {
				Type, Code string
				Param      *string
			}
		}
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		if w.Code != http.StatusBadRequest || body.Error.Code != c.code || body.Error.Param == nil || *body.Error.Param != c.param || body.Error.Type != "invalid_request_error" {
			t.Errorf("%s: %d %s, want param %s code %s", c.body, w.Code, w.Body, c.param, c.code)
		}
	}
	// The full size is always allowed.
	if w := do(e.h, "POST", "/v1/embeddings", key, `{"model":"embed","input":"x","dimensions":4}`); w.Code != http.StatusOK {
		t.Errorf("dimensions at the full size: %d %s", w.Code, w.Body)
	}
	// An embedding model does not chat.
	if w := do(e.h, "POST", "/v1/chat/completions", key, `{"model":"embed","messages":[{"role":"user","content":"hi"}]}`); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "model_not_found") {
		t.Errorf("chat with an embedding model: %d %s", w.Code, w.Body)
	}
	// The engine's errors name the wire's parameter.
	e.eng.errBefore = &inference.FieldError{Path: inference.Field("Input").At(0).At(2), Reason: "token 999 is not in the model's vocabulary"}
	if w := do(e.h, "POST", "/v1/embeddings", key, `{"model":"embed","input":[1,2,999]}`); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"param":"input[0][2]"`) {
		t.Errorf("engine error: %d %s", w.Code, w.Body)
	}
	e.eng.errBefore = nil
	e.eng.errPrepare = &inference.FieldError{Path: inference.Field("Input").At(1), Err: inference.ErrContextLength, Reason: "more than 510 tokens"}
	if w := do(e.h, "POST", "/v1/embeddings", key, `{"model":"embed","input":["a","b"]}`); w.Code != http.StatusBadRequest ||
		!strings.Contains(w.Body.String(), `"param":"input[1]"`) || !strings.Contains(w.Body.String(), "context_length_exceeded") {
		t.Errorf("prepare error: %d %s", w.Code, w.Body)
	}
}

func TestEmbeddingModelsListed(t *testing.T) {
	e := newEnv(t, withEmbeddings)
	w := do(e.h, "GET", "/v1/models", key, "")
	var list struct {
		Data []catalog.Object
	}
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, o := range list.Data {
		switch o.ID {
		case "embed", "matry":
			found++
			if o.Type != "embedding" || o.Dimensions != 4 || o.MaxOutputLength != 0 || o.OutputModalities[0] != "embeddings" {
				t.Errorf("embedding object %+v", o)
			}
		default:
			if o.Type != "" || o.Dimensions != 0 {
				t.Errorf("chat object %+v", o)
			}
		}
	}
	if found != 2 {
		t.Errorf("%d embedding models listed: %s", found, w.Body)
	}
	w = do(e.h, "GET", "/v1/models/matry", key, "")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"type":"embedding"`) || !strings.Contains(w.Body.String(), `"min_dimensions":2`) {
		t.Errorf("get model: %d %s", w.Code, w.Body)
	}
}

func TestEmbeddingsRateLimited(t *testing.T) {
	tier := ratelimit.Tier{Name: "small", Requests: 10, InputTokens: 10, OutputTokens: 10}
	e := limitedEnv(t, tier, withEmbeddings)
	w := do(e.h, "POST", "/v1/embeddings", key, `{"model":"embed","input":"one two three"}`)
	if w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if got := header(t, w, "X-Ratelimit-Remaining-Input-Tokens"); got != 5 {
		t.Errorf("remaining input tokens %d, want 5", got)
	}
	// Six more tokens do not fit in the five left.
	w = do(e.h, "POST", "/v1/embeddings", key, `{"model":"embed","input":"a b c d"}`)
	if w.Code != http.StatusTooManyRequests {
		t.Errorf("over the input-token limit: %d %s", w.Code, w.Body)
	}
	if len(e.eng.embeds) != 1 {
		t.Errorf("%d engine calls, want 1", len(e.eng.embeds))
	}
}

// bareEngine implements httpapi.Engine and not httpapi.Embedder.
type bareEngine struct{ f *fakeEngine }

func (b bareEngine) Prepare(ctx context.Context, req inference.Request) (*inference.Prepared, error) {
	return b.f.Prepare(ctx, req)
}

func (b bareEngine) Run(ctx context.Context, p *inference.Prepared) iter.Seq2[inference.Event, error] {
	return b.f.Run(ctx, p)
}

func (b bareEngine) Models() []inference.ModelInfo { return b.f.Models() }

func (b bareEngine) CountTokens(req inference.Request) (int, error) {
	return b.f.CountTokens(req)
}

func TestNewEmbeddingCatalog(t *testing.T) {
	keys, _ := httpapi.NewStaticKeys(key)
	for _, c := range []struct {
		name   string
		edit   func(*httpapi.Config, *fakeEngine)
		wantOK bool
	}{
		{"served", withEmbeddings, true},
		{"not an embedding model", func(cfg *httpapi.Config, f *fakeEngine) {
			cfg.Models = append(cfg.Models, catalog.Model{ID: "uncatalogued", Path: "/m/b.gguf", Kind: catalog.KindEmbedding})
		}, false},
		{"not served", func(cfg *httpapi.Config, f *fakeEngine) {
			cfg.Models = append(cfg.Models, catalog.Model{ID: "ghost", Path: "/m/g.gguf", Kind: catalog.KindEmbedding})
		}, false},
		{"too few dimensions", func(cfg *httpapi.Config, f *fakeEngine) {
			withEmbeddings(cfg, f)
			cfg.Models[len(cfg.Models)-1].MinDimensions = 8
		}, false},
		{"an engine that does not embed", func(cfg *httpapi.Config, f *fakeEngine) {
			withEmbeddings(cfg, f)
			cfg.Engine = bareEngine{f}
		}, false},
	} {
		f := newFake()
		cfg := httpapi.Config{Engine: f, Models: testCatalog(), Keys: keys}
		c.edit(&cfg, f)
		_, err := httpapi.New(cfg)
		if (err == nil) != c.wantOK {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// A default catalog makes the engine's embedding models embedding
	// entries.
	f := newFake()
	withEmbeddings(&httpapi.Config{}, f)
	h, err := httpapi.New(httpapi.Config{Engine: f, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	if w := do(h, "POST", "/v1/embeddings", key, `{"model":"embed","input":"x"}`); w.Code != http.StatusOK {
		t.Errorf("default catalog: %d %s", w.Code, w.Body)
	}
}

// TestEndUserLogged checks that the user of a legacy completion and of
// an embeddings request, which answer without it, reaches the access log
// as end_user, for abuse tracking: the field is honoured, not dropped.
func TestEndUserLogged(t *testing.T) {
	e := newEnv(t, withEmbeddings)
	for path, body := range map[string]string{
		"/v1/embeddings":  `{"model":"e","input":"one","user":"u-emb"}`,
		"/v1/completions": `{"model":"core-2-5-mini","prompt":"one","max_tokens":4,"user":"u-cmp"}`,
	} {
		if w := do(e.h, "POST", path, key, body); w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
	}
	for _, u := range []string{"end_user=u-emb", "end_user=u-cmp"} {
		if !strings.Contains(e.logs.String(), u) {
			t.Errorf("the access log has no %s:\n%s", u, e.logs.String())
		}
	}
}
