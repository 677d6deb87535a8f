package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/policy"
)

// scoringEngine is an engine that scores: one token per rune, ChatML, and
// a log-probability of -1 for the first candidate of a branch and -2 for
// the others.
type scoringEngine struct {
	err    error // Score's error, when set
	calls  int
	images [][]byte // of the last Score
}

func (s *scoringEngine) Models() []inference.ModelInfo {
	return []inference.ModelInfo{
		{ID: "chat", Path: "/m/chat.gguf", ContextLength: 4096},
		{ID: policy.SystemOne340M, Path: "/m/enc.gguf", ContextLength: 512},
		{ID: policy.SystemOne9B, Path: "/m/9b.gguf", ContextLength: 8192, Images: true},
	}
}

func (s *scoringEngine) Prepare(context.Context, inference.Request) (*inference.Prepared, error) {
	return nil, errors.New("not a chat engine")
}

func (s *scoringEngine) Run(context.Context, *inference.Prepared) iter.Seq2[inference.Event, error] {
	return func(yield func(inference.Event, error) bool) {
		yield(inference.Event{}, errors.New("not a chat engine"))
	}
}

func (s *scoringEngine) CountTokens(inference.Request) (int, error) { return 1, nil }

func (s *scoringEngine) Tokenize(_, text string) ([]int, error) {
	var out []int
	for _, r := range text {
		out = append(out, int(r))
	}
	return out, nil
}

func (s *scoringEngine) RenderPrompt(req inference.Request) (string, error) {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString("<|im_start|>" + string(m.Role) + "\n" + m.Content[0].Text + "<|im_end|>\n")
	}
	return b.String() + "<|im_start|>assistant\n", nil
}

func (s *scoringEngine) PrepareScore(req inference.ScoreRequest) (*inference.PreparedScore, error) {
	n := 0
	for _, b := range req.Branches {
		n += len(b.Text)
	}
	return &inference.PreparedScore{Request: req, InputTokens: len(req.Prefix) + n}, nil
}

func (s *scoringEngine) RunScore(_ context.Context, p *inference.PreparedScore) (inference.ScoreResult, error) {
	req := p.Request
	s.calls++
	s.images = req.Images
	if s.err != nil {
		return inference.ScoreResult{}, s.err
	}
	res := inference.ScoreResult{Usage: inference.Usage{PromptTokens: 100}}
	for _, b := range req.Branches {
		var bs inference.BranchScore
		for i := range b.Candidates {
			lp := -2.0
			if i == 0 {
				lp = -1
			}
			bs.LogProbs = append(bs.LogProbs, lp)
			bs.Probabilities = append(bs.Probabilities, math.Exp(lp))
		}
		res.Branches = append(res.Branches, bs)
	}
	return res, nil
}

func decisionServer(t *testing.T, eng httpapi.Engine) *httptest.Server {
	t.Helper()
	small, _ := policy.Model(policy.SystemOne340M)
	small.Path = "/m/enc.gguf"
	mm, _ := policy.Model(policy.SystemOne9B)
	mm.Path = "/m/9b.gguf"
	models := []catalog.Model{{ID: "chat", Path: "/m/chat.gguf"}, small, mm}
	keys, err := httpapi.NewStaticKeys("sk-test")
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(httpapi.Config{Engine: eng, Models: models, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func call(t *testing.T, srv *httptest.Server, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	status, _, out := callHeaders(t, srv, method, path, key, body)
	return status, out
}

// callHeaders is call with the response's headers; the body must be JSON,
// and say so.
func callHeaders(t *testing.T, srv *httptest.Server, method, path, key, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s %s: %d %s (Content-Type %q)", method, path, resp.StatusCode, raw, resp.Header.Get("Content-Type"))
	}
	return resp.StatusCode, resp.Header, out
}

const decisionBody = `{"model": "system-one-340m", "state": "The parcel arrived broken.",
 "questions": {"refund": {"type": "noul"}, "topic": {"type": "choice", "criteria": {"shipping": "delivery", "billing": "money"}},
 "anger": {"type": "score", "criteria": ["calm", "angry"]}}}`

func TestDecisions(t *testing.T) {
	eng := &scoringEngine{}
	srv := decisionServer(t, eng)
	for _, path := range []string{"/v1/system", "/v1/systemone"} {
		status, body := call(t, srv, "POST", path, "sk-test", decisionBody)
		if status != 200 {
			t.Fatalf("%s: %d %v", path, status, body)
		}
		raw, _ := json.Marshal(body)
		var res decision.Response
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		if res.Model != "system-one-340m" || res.Usage != (decision.Usage{InputTokens: 100}) || len(res.Answers) != 3 {
			t.Errorf("%s: %s", path, raw)
		}
		// The first label is the likeliest: e/(e+e^-1)... for two options.
		want := 1 / (1 + math.Exp(-1))
		if a := res.Answers["topic"]; a.Choice != "shipping" || math.Abs(a.Probabilities["shipping"]-want) > 1e-12 {
			t.Errorf("%s: topic %+v", path, a)
		}
		if a := res.Answers["refund"]; a.Noul == nil || math.Abs(*a.Noul-want) > 1e-12 {
			t.Errorf("%s: refund %+v", path, a)
		}
		if a := res.Answers["anger"]; a.Score == nil || math.Abs(*a.Score-(1-want)) > 1e-12 || string(a.Legend["1"]) != `"angry"` {
			t.Errorf("%s: anger %+v", path, a)
		}
	}
}

func TestDecisionModels(t *testing.T) {
	srv := decisionServer(t, &scoringEngine{})
	status, body := call(t, srv, "GET", "/v1/system/models", "sk-test", "")
	if status != 200 || body["object"] != "list" {
		t.Fatalf("%d %v", status, body)
	}
	var ids []string
	for _, m := range body["data"].([]any) {
		ids = append(ids, m.(map[string]any)["id"].(string))
	}
	if strings.Join(ids, ",") != "system-one-340m,system-one-9b" {
		t.Errorf("decision models %v", ids)
	}
	raw, _ := json.Marshal(body["data"].([]any)[1])
	if !strings.Contains(string(raw), `"prompt":"0.00000009"`) {
		t.Errorf("9b's price: %s", raw)
	}
	// Chat models and decision models are listed apart; /v1/models lists
	// the decision models in System One's shape under "models", for its
	// SDKs.
	_, chat := call(t, srv, "GET", "/v1/models", "sk-test", "")
	if data := chat["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != "chat" {
		t.Errorf("/v1/models: %v", chat)
	}
	models, _ := chat["models"].([]any)
	if len(models) != 2 {
		t.Fatalf("/v1/models lists %d System One models: %v", len(models), chat)
	}
	m := models[1].(map[string]any)
	if m["name"] != "system-one-9b" || !strings.Contains(m["description"].(string), "9B") || !regexp.MustCompile(`^\d{4}-\d\d-\d\d$`).MatchString(m["release_date"].(string)) {
		t.Errorf("System One model %v", m)
	}
}

// Images reach the engine of a multimodal model, decoded.
func TestDecisionImages(t *testing.T) {
	eng := &scoringEngine{}
	srv := decisionServer(t, eng)
	status, body := call(t, srv, "POST", "/v1/systemone", "sk-test",
		`{"model": "system-one-9b", "state": "s", "questions": {"a": {"type": "noul"}}, "images": ["data:image/png;base64,aGk=", {"data": "aG8="}]}`)
	if status != 200 || len(eng.images) != 2 || string(eng.images[0]) != "hi" || string(eng.images[1]) != "ho" {
		t.Fatalf("%d %v; the engine got images %q", status, body, eng.images)
	}
}

func TestDecisionErrors(t *testing.T) {
	eng := &scoringEngine{}
	srv := decisionServer(t, eng)
	for _, c := range []struct {
		name, key, body string
		status          int
		code, param     string
	}{
		{"no key", "", decisionBody, 401, "invalid_api_key", ""},
		{"bad key", "sk-wrong", decisionBody, 401, "invalid_api_key", ""},
		{"bad json", "sk-test", `{"model": `, 400, "invalid_json", ""},
		{"no model", "sk-test", `{"state": "s"}`, 400, "missing_required_parameter", "model"},
		{"chat model", "sk-test", strings.Replace(decisionBody, "system-one-340m", "chat", 1), 400, "model_not_found", "model"},
		{"unknown model", "sk-test", strings.Replace(decisionBody, "system-one-340m", "nope", 1), 400, "model_not_found", "model"},
		{"empty state", "sk-test", `{"model": "system-one-340m", "state": "", "questions": {"a": {"type": "noul"}}}`, 400, "invalid_value", "state"},
		{"unknown type", "sk-test", `{"model": "system-one-340m", "state": "s", "questions": {"a": {"type": "maybe"}}}`, 400, "invalid_value", "questions.a.type"},
		{"images on text model", "sk-test", `{"model": "system-one-340m", "state": "s", "questions": {"a": {"type": "noul"}}, "images": ["x"]}`, 400, "invalid_value", "images"},
		{"bad image on multimodal", "sk-test", `{"model": "system-one-9b", "state": "s", "questions": {"a": {"type": "noul"}}, "images": ["aGk=", "x"]}`, 400, "invalid_value", "images[1]"},
		{"remote image", "sk-test", `{"model": "system-one-9b", "state": "s", "questions": {"a": {"type": "noul"}}, "images": ["https://example.com/a.png"]}`, 400, "invalid_value", "images[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := call(t, srv, "POST", "/v1/system", c.key, c.body)
			e, _ := body["error"].(map[string]any)
			if status != c.status || e == nil || e["code"] != c.code || (c.param != "" && e["param"] != c.param) {
				t.Errorf("%d %v, want %d code %q param %q", status, body, c.status, c.code, c.param)
			}
			if e != nil && e["type"] == nil {
				t.Errorf("no error type: %v", body)
			}
		})
	}
	if eng.calls != 0 {
		t.Errorf("%d Score calls for invalid requests", eng.calls)
	}
	eng.err = inference.ErrContextLength
	status, body := call(t, srv, "POST", "/v1/system", "sk-test", decisionBody)
	if e, _ := body["error"].(map[string]any); status != 400 || e["code"] != "context_length_exceeded" || e["param"] != "state" {
		t.Errorf("context length: %d %v", status, body)
	}
	eng.err = &inference.ImageError{Index: 1, Reason: "is not a PNG, JPEG or GIF picture"}
	status, body = call(t, srv, "POST", "/v1/system", "sk-test", `{"model": "system-one-9b", "state": "s", "questions": {"a": {"type": "noul"}}, "images": ["aGk=", "aGk="]}`)
	if e, _ := body["error"].(map[string]any); status != 400 || e["code"] != "invalid_value" || e["param"] != "images[1]" || !strings.Contains(e["message"].(string), "PNG") {
		t.Errorf("an image the model cannot read: %d %v", status, body)
	}
}
