package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/inference"
)

// /v1/systemone answers errors as System One's server does: a request that
// does not validate is a 422 with FastAPI's detail list, locating the
// field from "body" (a question id is one element, dots and all); every
// other error is {detail: {error_type, message}}; an overloaded model is a
// 529 with Retry-After. No malformed request gets a 5xx.
func TestSystemOneErrors(t *testing.T) {
	eng := &scoringEngine{}
	srv := decisionServer(t, eng)
	post := func(key, body string) (int, http.Header, map[string]any) {
		t.Helper()
		return callHeaders(t, srv, "POST", "/v1/systemone", key, body)
	}
	const q = `{"a": {"type": "noul"}}`
	for _, c := range []struct {
		name, key, body string
		loc             string // the loc as JSON, for a 422
		typ             string // pydantic's type, for a 422
	}{
		{"bad json", "sk-test", `{"model": `, `["body"]`, "json_invalid"},
		{"not an object", "sk-test", `[1, 2]`, `["body"]`, "json_invalid"},
		{"no model", "sk-test", `{"state": "s", "questions": ` + q + `}`, `["body","model"]`, "missing"},
		{"numeric model", "sk-test", `{"model": 5, "state": "s", "questions": ` + q + `}`, `["body","model"]`, "string_type"},
		{"unknown model", "sk-test", `{"model": "nope", "state": "s", "questions": ` + q + `}`, `["body","model"]`, "value_error"},
		{"no state", "sk-test", `{"model": "jev-latest", "questions": ` + q + `}`, `["body","state"]`, "missing"},
		{"numeric state", "sk-test", `{"model": "jev-latest", "state": 1, "questions": ` + q + `}`, `["body","state"]`, "string_type"},
		{"no questions", "sk-test", `{"model": "jev-latest", "state": "s"}`, `["body","questions"]`, "missing"},
		{"empty questions", "sk-test", `{"model": "jev-latest", "state": "s", "questions": {}}`, `["body","questions"]`, "value_error"},
		{"no type", "sk-test", `{"model": "jev-latest", "state": "s", "questions": {"a.b c": {}}}`, `["body","questions","a.b c","type"]`, "missing"},
		{"boolean type", "sk-test", `{"model": "jev-latest", "state": "s", "questions": {"a.b c": {"type": "boolean"}}}`, `["body","questions","a.b c","type"]`, "value_error"},
		{"empty choice", "sk-test", `{"model": "jev-latest", "state": "s", "questions": {"a": {"type": "choice", "criteria": {}}}}`, `["body","questions","a","criteria"]`, "value_error"},
		{"score map", "sk-test", `{"model": "jev-latest", "state": "s", "questions": {"a": {"type": "score", "criteria": {"0": "low", "1": "high"}}}}`, `["body","questions","a","criteria"]`, "value_error"},
		{"numeric instructions", "sk-test", `{"model": "jev-latest", "state": "s", "questions": {"a": {"type": "noul", "instructions": 1}}}`, `["body","questions","a","instructions"]`, "value_error"},
		{"bad image", "sk-test", `{"model": "system-one-9b", "state": "s", "questions": ` + q + `, "images": ["aGk=", "x"]}`, `["body","images",1]`, "value_error"},
		{"no key", "", decisionBody, "", "authentication_error"},
		{"wrong key", "sk-wrong", decisionBody, "", "authentication_error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, _, body := post(c.key, c.body)
			if c.loc == "" {
				d, _ := body["detail"].(map[string]any)
				if status != 401 || d == nil || d["error_type"] != c.typ || d["message"] == "" {
					t.Errorf("%d %v, want 401 with error_type %s", status, body, c.typ)
				}
				return
			}
			list, _ := body["detail"].([]any)
			if status != 422 || len(list) != 1 {
				t.Fatalf("%d %v, want 422 with one fault", status, body)
			}
			fault := list[0].(map[string]any)
			loc, _ := json.Marshal(fault["loc"])
			if string(loc) != c.loc || fault["type"] != c.typ || fault["msg"] == "" {
				t.Errorf("fault %v, want loc %s type %s", fault, c.loc, c.typ)
			}
		})
	}
	if eng.calls != 0 {
		t.Errorf("%d Score calls for invalid requests", eng.calls)
	}

	// Errors past validation.
	for _, c := range []struct {
		name   string
		err    error
		status int
		loc    string // for a 422
		typ    string // error_type, for the rest
	}{
		{"context length", inference.ErrContextLength, 422, `["body","state"]`, ""},
		{"overloaded", inference.ErrOverloaded, 529, "", "overloaded_error"},
		{"engine failure", inference.ErrClosed, 500, "", "api_error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			eng.err = c.err
			status, h, body := post("sk-test", decisionBody)
			if status != c.status {
				t.Fatalf("%d %v, want %d", status, body, c.status)
			}
			if c.loc != "" {
				loc, _ := json.Marshal(body["detail"].([]any)[0].(map[string]any)["loc"])
				if string(loc) != c.loc {
					t.Errorf("loc %s, want %s", loc, c.loc)
				}
				return
			}
			if d, _ := body["detail"].(map[string]any); d == nil || d["error_type"] != c.typ {
				t.Errorf("%v, want error_type %s", body, c.typ)
			}
			if c.status == 529 && h.Get("Retry-After") == "" {
				t.Error("a 529 without Retry-After")
			}
		})
	}
	eng.err = nil

	// Other methods and paths under /v1/systemone take its shape too.
	for _, c := range []struct{ method, path string }{{"GET", "/v1/systemone"}, {"POST", "/v1/systemone/v2"}} {
		status, _, body := callHeaders(t, srv, c.method, c.path, "", "")
		if d, _ := body["detail"].(map[string]any); status/100 != 4 || d == nil || d["error_type"] == "" {
			t.Errorf("%s %s: %d %v", c.method, c.path, status, body)
		}
	}
}

// jev-latest, the official SDKs' default model, names the first decision
// model the engine serves; unknown top-level fields are ignored.
func TestSystemOneDefaultModel(t *testing.T) {
	srv := decisionServer(t, &scoringEngine{})
	status, body := call(t, srv, "POST", "/v1/systemone", "sk-test",
		strings.Replace(decisionBody, `"system-one-340m"`, `"jev-latest", "x_nonce": 7, "extra": {"a": [1]}`, 1))
	if status != 200 || len(body["answers"].(map[string]any)) != 3 {
		t.Fatalf("%d %v", status, body)
	}
}
