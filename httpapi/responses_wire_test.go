package httpapi_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/responses"

	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
)

// absentFields returns the JSON keys of the SDK's Response that data
// lacks, by the SDK's presence metadata.
func absentFields(t *testing.T, data []byte) (responses.Response, []string) {
	t.Helper()
	var r responses.Response
	if err := r.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	var out []string
	rt, meta := reflect.TypeFor[responses.Response](), reflect.ValueOf(r.JSON)
	for i := range rt.NumField() {
		key, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if key == "" || key == "-" {
			continue
		}
		if meta.FieldByName(rt.Field(i).Name).Interface().(respjson.Field).Raw() == respjson.Omitted {
			out = append(out, key)
		}
	}
	return r, out
}

// TestResponsesObjectServed checks the served response objects, blocking
// and each one of the stream, against the SDK's Response: every field is
// there, completed_at is set once completed, and the usage splits the
// prompt into cache reads and writes.
func TestResponsesObjectServed(t *testing.T) {
	e := newEnv(t, func(_ *httpapi.Config, f *fakeEngine) {
		f.result.Usage = inference.Usage{PromptTokens: 5, CachedTokens: 2, CompletionTokens: 2}
	})
	body := strings.Replace(responsesBody, `{`, `{"presence_penalty":0.5,"max_tool_calls":2,"safety_identifier":"sid",`, 1)
	w := do(e.h, "POST", "/v1/responses", key, body)
	r, absent := absentFields(t, w.Body.Bytes())
	if w.Code != 200 || len(absent) > 0 {
		t.Fatalf("%d, lacks %v: %s", w.Code, absent, w.Body)
	}
	if r.CompletedAt != float64(e.clock.Now().Unix()) || r.MaxToolCalls != 2 || r.SafetyIdentifier != "sid" ||
		r.Usage.InputTokensDetails.CachedTokens != 2 || r.Usage.InputTokensDetails.CacheWriteTokens != 3 {
		t.Errorf("response %s", w.Body)
	}
	if got := e.eng.lastRequest(t).PresencePenalty; got != 0.5 {
		t.Errorf("the engine got presence penalty %v", got)
	}

	w = do(e.h, "POST", "/v1/responses", key, streaming(body))
	n := 0
	for f := range strings.SplitSeq(strings.TrimSpace(w.Body.String()), "\n\n") {
		_, data, _ := strings.Cut(f, "\ndata: ")
		if f == "data: [DONE]" {
			continue
		}
		var ev struct {
			Type     string
			Response json.RawMessage
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("%v: %q", err, f)
		}
		if ev.Response == nil {
			continue
		}
		n++
		r, absent := absentFields(t, ev.Response)
		if len(absent) > 0 || (ev.Type == "response.completed") != r.JSON.CompletedAt.Valid() || r.MaxToolCalls != 2 {
			t.Errorf("%s lacks %v: %s", ev.Type, absent, ev.Response)
		}
	}
	if n != 3 {
		t.Errorf("%d response objects in the stream:\n%s", n, w.Body)
	}

	// A parameter the parser reads but cannot honour is refused, naming it.
	w = do(e.h, "POST", "/v1/responses", key, strings.Replace(responsesBody, `{`, `{"truncation":"auto",`, 1))
	if _, _, param, _ := errorOf(t, w.Body.Bytes()); w.Code != 400 || param != "truncation" {
		t.Errorf("truncation auto: %d %s", w.Code, w.Body)
	}
}
