//go:build cgo

package httpapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats/embeddings"
	"github.com/inferkit/inferkit/formats/rerank"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// embedAnswer is an embeddings or rerank answer as a check reads it.
type embedAnswer struct {
	Model string `json:"model"`
	Data  []struct {
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Results []struct {
		Index          int             `json:"index"`
		RelevanceScore float64         `json:"relevance_score"`
		Document       json.RawMessage `json:"document"`
	} `json:"results"`
	Error struct {
		Param string `json:"param"`
	} `json:"error"`
}

// TestEmbedRerankParameterTable runs every cell of the embeddings and
// rerank table of package formats' doc on the real engine and tiny BERT
// models: each honoured cell shows its effect, each refused one its 400
// naming the field. It fails for a request field without a row or a row
// without a check.
func TestEmbedRerankParameterTable(t *testing.T) {
	styles := []string{"embeddings", "rerank"}
	table := readParamTable(t, styles)
	for style, rt := range map[string]reflect.Type{"embeddings": reflect.TypeFor[embeddings.Request](), "rerank": reflect.TypeFor[rerank.Request]()} {
		for i := range rt.NumField() {
			key, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if cell := table[key][style]; cell == "" || cell == "-" {
				t.Errorf("%s.Request has %s, which the table does not list for %s", style, key, style)
			}
		}
	}

	models := []catalog.Model{
		{ID: "core-embed", Path: inferencetest.Model(t, inferencetest.Options{Arch: "bert", Pooling: "mean", Seed: 1}), Kind: catalog.KindEmbedding},
		{ID: "qwen-embed", Path: inferencetest.Model(t, inferencetest.Options{Arch: "qwen3", Pooling: "last", Seed: 1}), Kind: catalog.KindEmbedding, MinDimensions: 16},
		{ID: "rr", Path: inferencetest.Model(t, inferencetest.Options{Arch: "bert"}), Kind: catalog.KindRerank},
	}
	logs := &syncBuffer{}
	rec := &sdkRecorder{} // and through the TypeScript SDKs at the end
	url := serveEngine(t, inference.Config{Models: models, Parallel: 1, ContextTokens: sdkContext},
		httpapi.Config{Models: models, Logger: slog.New(slog.NewTextHandler(logs, nil)), Middleware: []func(http.Handler) http.Handler{rec.Middleware}}, "")

	// post sends the style's base request with fields set (a value of
	// nil deletes the field) and returns the status and the answer.
	post := func(t *testing.T, style string, fields map[string]any) (int, embedAnswer) {
		t.Helper()
		body := map[string]any{"model": "core-embed", "input": "one two"}
		if style == "rerank" {
			body = map[string]any{"model": "rr", "query": "What color is the sky?", "documents": rerankDocs}
		}
		for k, v := range fields {
			body[k] = v
			if v == nil {
				delete(body, k)
			}
		}
		b, _ := json.Marshal(body)
		status, raw := send(t, "POST", url+"/v1/"+style, string(b))
		var a embedAnswer
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return status, a
	}
	ok := func(t *testing.T, style string, fields map[string]any) embedAnswer {
		t.Helper()
		status, a := post(t, style, fields)
		if status != 200 {
			t.Fatalf("%v: status %d, %+v", fields, status, a)
		}
		return a
	}
	refused := func(t *testing.T, style, param string, fields map[string]any) {
		t.Helper()
		if status, a := post(t, style, fields); status != 400 || a.Error.Param != param {
			t.Errorf("%v: status %d, param %q; want 400 naming %s", fields, status, a.Error.Param, param)
		}
	}
	dims := func(a embedAnswer) int {
		var v []float64
		_ = json.Unmarshal(a.Data[0].Embedding, &v)
		return len(v)
	}
	checks := map[string]map[string]func(t *testing.T){
		"model": {
			"embeddings": func(t *testing.T) {
				a, b := ok(t, "embeddings", map[string]any{"model": "qwen-embed"}), ok(t, "embeddings", nil)
				if a.Model != "qwen-embed" || string(a.Data[0].Embedding) == string(b.Data[0].Embedding) {
					t.Errorf("qwen-embed answers as %q, with core-embed's vector", a.Model)
				}
			},
			"rerank": func(t *testing.T) {
				if a := ok(t, "rerank", nil); a.Model != "rr" {
					t.Errorf("rr answers as %q", a.Model)
				}
			},
		},
		"input": {"embeddings": func(t *testing.T) {
			if a := ok(t, "embeddings", map[string]any{"input": []string{"one", "two", "three"}}); len(a.Data) != 3 {
				t.Errorf("3 inputs: %d vectors", len(a.Data))
			}
		}},
		"encoding_format": {"embeddings": func(t *testing.T) {
			if a := ok(t, "embeddings", map[string]any{"encoding_format": "base64"}); !strings.HasPrefix(string(a.Data[0].Embedding), `"`) {
				t.Errorf("base64: %s", a.Data[0].Embedding)
			}
			refused(t, "embeddings", "encoding_format", map[string]any{"encoding_format": "xml"})
		}},
		"dimensions": {"embeddings": func(t *testing.T) {
			if a := ok(t, "embeddings", map[string]any{"model": "qwen-embed", "dimensions": 16}); dims(a) != 16 {
				t.Errorf("dimensions 16: %d", dims(a))
			}
			refused(t, "embeddings", "dimensions", map[string]any{"dimensions": 16}) // core-embed is not trained for it
		}},
		"user": {"embeddings": func(t *testing.T) {
			ok(t, "embeddings", map[string]any{"user": "u-45"})
			if !strings.Contains(logs.String(), "end_user=u-45") {
				t.Error("the access log has no end_user=u-45")
			}
		}},
		"query": {"rerank": func(t *testing.T) {
			a, b := ok(t, "rerank", nil), ok(t, "rerank", map[string]any{"query": "Did the stock market fall?"})
			if reflect.DeepEqual(a.Results, b.Results) {
				t.Errorf("two queries rank alike: %+v", a.Results)
			}
		}},
		"documents": {"rerank": func(t *testing.T) {
			if a := ok(t, "rerank", map[string]any{"documents": rerankDocs[:2]}); len(a.Results) != 2 {
				t.Errorf("2 documents: %d results", len(a.Results))
			}
		}},
		"top_n": {"rerank": func(t *testing.T) {
			all, top := ok(t, "rerank", nil), ok(t, "rerank", map[string]any{"top_n": 2})
			if len(top.Results) != 2 || top.Results[0].Index != all.Results[0].Index {
				t.Errorf("top_n 2: %+v of %+v", top.Results, all.Results)
			}
		}},
		"return_documents": {"rerank": func(t *testing.T) {
			with, without := ok(t, "rerank", nil), ok(t, "rerank", map[string]any{"return_documents": false})
			if len(with.Results[0].Document) == 0 || len(without.Results[0].Document) != 0 && string(without.Results[0].Document) != "null" {
				t.Errorf("return_documents: %s, and false: %s", with.Results[0].Document, without.Results[0].Document)
			}
		}},
	}
	for name, cells := range table {
		for _, style := range styles {
			if cells[style] == "-" {
				continue
			}
			t.Run(name+"/"+style+"/"+cells[style], func(t *testing.T) {
				check := checks[name][style]
				if check == nil {
					t.Fatalf("no check for %s on %s", name, style)
				}
				rec.SetRow(name + "/" + style)
				check(t)
			})
		}
	}
	t.Run("typescript-sdks", func(t *testing.T) {
		calls := rec.Calls()
		replayThroughNPM(t, url, calls)
		t.Logf("%d requests through the TypeScript SDKs", len(calls))
	})
}
