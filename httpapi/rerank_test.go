//go:build cgo

package httpapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

var rerankDocs = []string{"The sky is blue today.", "It rains, and the streets are wet.", "Stock prices fell 3% on Monday!", "Cats sleep most of the day."}

// rerankResponse is the answer of POST /v1/rerank as a client reads it.
type rerankResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Results []struct {
		Index          int                    `json:"index"`
		RelevanceScore float64                `json:"relevance_score"`
		Document       *struct{ Text string } `json:"document"`
	} `json:"results"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// send sends a request to url with the test key and returns the status
// and the body read.
func send(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// rerankServer serves, on the real engine, a tiny BERT reranker as "rr"
// (0.1 USD per 1M tokens), the tiny chat model as core-2-5-mini, and a
// tiny embedding model, under a tier of 8 requests a minute, with an
// in-memory limiter; it returns the URL, the limiter, the key's id and
// the reranker's file.
func rerankServer(t *testing.T) (string, *ratelimit.Memory, string, string) {
	t.Helper()
	chat, _ := policy.Model(policy.Core25Mini)
	chat.Path = tinyModel(t)
	reranker := inferencetest.Model(t, inferencetest.Options{Arch: "bert"})
	models := []catalog.Model{
		chat,
		{ID: "rr", Path: reranker, Kind: catalog.KindRerank, Pricing: catalog.Pricing{Prompt: "0.0000001"}},
		{ID: "judge", Path: reranker, Kind: catalog.KindDecision},
		{ID: "core-embed", Path: inferencetest.Model(t, inferencetest.Options{Arch: "bert", Pooling: "mean", Seed: 1}), Kind: catalog.KindEmbedding},
	}
	secret := []byte(strings.Repeat("s", 32))
	keys, err := httpapi.NewSharedKeys(secret, httpapi.APIKey{Key: key, Tier: ratelimit.Tier{Name: "small", Requests: 9}})
	if err != nil {
		t.Fatal(err)
	}
	_, id := account.KeyDigest(secret, key)
	l := ratelimit.NewMemory()
	url := serveEngine(t, inference.Config{Models: models, Parallel: 1, ContextTokens: sdkContext},
		httpapi.Config{Models: models, Keys: keys, Limiter: l}, "")
	return url, l, id, reranker
}

// TestRerank: POST /v1/rerank ranks documents with a BERT reranker
// (scores that are the sigmoid of Engine.Rank's, most relevant first,
// cut at top_n, documents given as strings and objects) and with a chat
// model (each document's probability of being relevant); the reranker
// is listed with its type; invalid requests are 400s naming the field;
// each request is priced and counted, and the key's request limit
// refuses the tenth.
func TestRerank(t *testing.T) {
	url, l, keyID, path := rerankServer(t)
	eng, err := inference.New(inference.Config{Threads: 1, ContextTokens: sdkContext, Logger: slog.New(slog.DiscardHandler),
		Models: []catalog.Model{{ID: "rr", Path: path}}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	want, err := eng.Rank(t.Context(), inference.RankRequest{Model: "rr", Query: "What is the weather like?", Documents: rerankDocs})
	if err != nil {
		t.Fatal(err)
	}

	docs, _ := json.Marshal([]any{rerankDocs[0], map[string]string{"text": rerankDocs[1]}, rerankDocs[2], rerankDocs[3]})
	code, body := send(t, "POST", url+"/v1/rerank", `{"model":"rr","query":"What is the weather like?","top_n":3,"documents":`+string(docs)+`}`)
	var res rerankResponse
	if err := json.Unmarshal(body, &res); code != http.StatusOK || err != nil {
		t.Fatalf("rr: %d %s", code, body)
	}
	rrTokens := res.Usage.PromptTokens
	if res.Model != "rr" || !strings.HasPrefix(res.ID, "rerank-") || len(res.Results) != 3 || res.Usage.PromptTokens != want.Usage.PromptTokens || res.Usage.TotalTokens != res.Usage.PromptTokens {
		t.Fatalf("rr: %s (the engine read %d tokens)", body, want.Usage.PromptTokens)
	}
	for i, r := range res.Results {
		if s := 1 / (1 + math.Exp(-want.Scores[r.Index])); math.Abs(r.RelevanceScore-s) > 1e-6 {
			t.Errorf("result %d (document %d): score %v, want sigmoid(%v) = %v", i, r.Index, r.RelevanceScore, want.Scores[r.Index], s)
		}
		if r.Document == nil || r.Document.Text != rerankDocs[r.Index] {
			t.Errorf("result %d: document %+v, want %q", i, r.Document, rerankDocs[r.Index])
		}
		if i > 0 && r.RelevanceScore > res.Results[i-1].RelevanceScore {
			t.Errorf("result %d ranks above result %d", i, i-1)
		}
	}
	best := slices.IndexFunc(want.Scores, func(s float64) bool { return s == slices.Max(want.Scores) })
	if res.Results[0].Index != best {
		t.Errorf("first result: document %d, the engine's best is %d", res.Results[0].Index, best)
	}

	code, body = send(t, "POST", url+"/v1/rerank", `{"model":"core-2-5-mini","query":"What is the weather like?","return_documents":false,"documents":["The sky is blue today.","Stock prices fell."]}`)
	res = rerankResponse{}
	if err := json.Unmarshal(body, &res); code != http.StatusOK || err != nil || len(res.Results) != 2 || res.Usage.PromptTokens == 0 {
		t.Fatalf("chat model: %d %s", code, body)
	}
	chatTokens := res.Usage.PromptTokens
	if res.Results[0].Index+res.Results[1].Index != 1 || res.Results[0].Document != nil {
		t.Errorf("chat model: %s", body)
	}
	for _, r := range res.Results {
		if !(r.RelevanceScore >= 0 && r.RelevanceScore <= 1) {
			t.Errorf("chat model: score %v outside 0 to 1", r.RelevanceScore)
		}
	}

	// A decision entry on the reranker ranks as the reranker does.
	code, body = send(t, "POST", url+"/v1/rerank", `{"model":"judge","query":"What is the weather like?","documents":`+string(docs)+`}`)
	var judged rerankResponse
	if err := json.Unmarshal(body, &judged); code != http.StatusOK || err != nil || len(judged.Results) != 4 ||
		judged.Results[0].Index != best || judged.Usage.PromptTokens != rrTokens {
		t.Errorf("the decision entry: %d %s", code, body)
	}

	// Listed with its type.
	code, body = send(t, "GET", url+"/v1/models/rr", "")
	if code != http.StatusOK || !strings.Contains(string(body), `"type":"rerank"`) {
		t.Errorf("GET /v1/models/rr: %d %s", code, body)
	}

	// Refused before any reservation, naming the field.
	for _, tc := range []struct{ body, param string }{
		{`{"model":"rr","query":"q","documents":["a",{"text":""}]}`, "documents[1].text"},
		{`{"model":"rr","query":"q","documents":["a"],"top_n":0}`, "top_n"},
		{`{"model":"rr","query":"q","documents":["a"],"rank_fields":["text"]}`, "rank_fields"},
		{`{"model":"core-embed","query":"q","documents":["a"]}`, "model"},
		{`{"model":"rr","query":"q","documents":["a","` + strings.Repeat("word ", 600) + `"]}`, "documents[1]"},
	} {
		code, body := send(t, "POST", url+"/v1/rerank", tc.body)
		var e struct{ Error struct{ Param string } }
		if err := json.Unmarshal(body, &e); code != http.StatusBadRequest || err != nil || e.Error.Param != tc.param {
			t.Errorf("%.60s: %d %s, want a 400 naming %s", tc.body, code, body, tc.param)
		}
	}

	// Counted and priced at each model's prompt price (core-2-5-mini:
	// 0.5 USD per 1M tokens, judge: free); the 400s count in the window
	// only.
	u, err := l.Usage(t.Context(), keyID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	spent := ratelimit.Money(rrTokens)*100*ratelimit.NanoDollar + ratelimit.Money(chatTokens)*500*ratelimit.NanoDollar
	if u.Requests != 3 || u.InputTokens != int64(2*rrTokens+chatTokens) || u.OutputTokens != 0 || u.Spent != spent || u.Held != 0 {
		t.Errorf("usage %+v, want 3 requests, %d input tokens, %s USD", u, 2*rrTokens+chatTokens, spent)
	}
	code, _ = send(t, "POST", url+"/v1/rerank", `{"model":"rr","query":"q","documents":["a"]}`)
	if code != http.StatusTooManyRequests {
		t.Errorf("past the tier's 9 requests a minute: %d, want 429", code)
	}
}
