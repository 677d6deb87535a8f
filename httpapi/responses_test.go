package httpapi_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
)

// postResponse creates a response and returns its id.
func postResponse(t *testing.T, e *env, k, body string) string {
	t.Helper()
	w := do(e.h, "POST", "/v1/responses", k, body)
	if w.Code != 200 {
		t.Fatalf("POST /v1/responses: %d %s", w.Code, w.Body)
	}
	id, _ := decode(t, w.Body.Bytes())["id"].(string)
	if !strings.HasPrefix(id, "resp_") {
		t.Fatalf("id %q", id)
	}
	return id
}

// texts returns the roles and texts of messages, for comparison.
func texts(msgs []inference.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(string(m.Role) + ":")
		for _, p := range m.Content {
			b.WriteString(p.Text)
		}
		b.WriteString("|")
	}
	return b.String()
}

func TestPreviousResponse(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "blocking", true: "streaming"}[stream], func(t *testing.T) {
			e := newEnv(t, nil)
			first := `{"model":"core-2-5-mini","instructions":"Be terse.","input":"first"}`
			if stream {
				first = streaming(first)
			}
			var id string
			if stream {
				// A streamed response is stored under the id it streamed.
				w := do(e.h, "POST", "/v1/responses", key, first)
				if !strings.Contains(lastEvent(w.Body.String()), "response.completed") {
					t.Fatalf("stream: %s", w.Body)
				}
				id = responseID(t, lastEvent(w.Body.String()))
			} else {
				id = postResponse(t, e, key, first)
			}
			if got := texts(e.eng.lastRequest(t).Messages); got != "system:Be terse.|user:first|" {
				t.Errorf("first request %s", got)
			}

			// GET returns the stored object.
			w := do(e.h, "GET", "/v1/responses/"+id, key, "")
			if r := decode(t, w.Body.Bytes()); w.Code != 200 || r["id"] != id || r["output_text"] != "Hello world" || r["status"] != "completed" {
				t.Errorf("GET: %d %s", w.Code, w.Body)
			}

			// Continuing carries the conversation but not the instructions.
			next := postResponse(t, e, key, `{"model":"core-2-5-mini","previous_response_id":"`+id+`","instructions":"Be kind.","input":"second"}`)
			if got := texts(e.eng.lastRequest(t).Messages); got != "system:Be kind.|user:first|assistant:Hello world|user:second|" {
				t.Errorf("continued request %s", got)
			}
			w = do(e.h, "GET", "/v1/responses/"+next, key, "")
			if r := decode(t, w.Body.Bytes()); r["previous_response_id"] != id {
				t.Errorf("previous_response_id %v", r["previous_response_id"])
			}
			// And a continuation of the continuation holds all of it.
			postResponse(t, e, key, `{"model":"core-2-5-mini","previous_response_id":"`+next+`","input":"third"}`)
			if got := texts(e.eng.lastRequest(t).Messages); got != "user:first|assistant:Hello world|user:second|assistant:Hello world|user:third|" {
				t.Errorf("second continuation %s", got)
			}

			// Another key sees nothing of it.
			for _, tc := range []struct{ method, path, body string }{
				{"GET", "/v1/responses/" + id, ""},
				{"DELETE", "/v1/responses/" + id, ""},
				{"POST", "/v1/responses", `{"model":"core-2-5-mini","previous_response_id":"` + id + `","input":"steal"}`},
			} {
				w := do(e.h, tc.method, tc.path, otherKey, tc.body)
				if typ, _, _, _ := errorOf(t, w.Body.Bytes()); w.Code != 404 || typ != "invalid_request_error" {
					t.Errorf("other key %s %s: %d %s", tc.method, tc.path, w.Code, w.Body)
				}
			}
			w = do(e.h, "POST", "/v1/responses", otherKey, `{"model":"core-2-5-mini","previous_response_id":"`+id+`","input":"steal"}`)
			if _, code, param, _ := errorOf(t, w.Body.Bytes()); code != "previous_response_not_found" || param != "previous_response_id" {
				t.Errorf("continuing another key's response: %s", w.Body)
			}

			// DELETE removes it, once.
			w = do(e.h, "DELETE", "/v1/responses/"+id, key, "")
			if r := decode(t, w.Body.Bytes()); w.Code != 200 || r["id"] != id || r["object"] != "response.deleted" || r["deleted"] != true {
				t.Errorf("DELETE: %d %s", w.Code, w.Body)
			}
			for _, method := range []string{"GET", "DELETE"} {
				if w := do(e.h, method, "/v1/responses/"+id, key, ""); w.Code != 404 {
					t.Errorf("%s after DELETE: %d", method, w.Code)
				}
			}
			if w := do(e.h, "POST", "/v1/responses", key, `{"model":"core-2-5-mini","previous_response_id":"`+id+`","input":"x"}`); w.Code != 404 {
				t.Errorf("continuing a deleted response: %d", w.Code)
			}
		})
	}
}

// responseID returns the response id of a responses stream event.
func responseID(t *testing.T, event string) string {
	t.Helper()
	_, data, _ := strings.Cut(event, "data: ")
	r, _ := decode(t, []byte(data))["response"].(map[string]any)
	id, _ := r["id"].(string)
	if id == "" {
		t.Fatalf("no response id in %s", event)
	}
	return id
}

func TestStoreFalse(t *testing.T) {
	e := newEnv(t, nil)
	for _, body := range []string{
		`{"model":"core-2-5-mini","input":"Hi","store":false}`,
		streaming(`{"model":"core-2-5-mini","input":"Hi","store":false}`),
	} {
		w := do(e.h, "POST", "/v1/responses", key, body)
		var id string
		if strings.Contains(body, "stream") {
			id = responseID(t, lastEvent(w.Body.String()))
		} else {
			id, _ = decode(t, w.Body.Bytes())["id"].(string)
		}
		if !strings.Contains(w.Body.String(), `"store":false`) {
			t.Errorf("response does not say store false: %s", w.Body)
		}
		if w := do(e.h, "GET", "/v1/responses/"+id, key, ""); w.Code != 404 {
			t.Errorf("store false was stored: %d", w.Code)
		}
	}
}

func TestResponseTTL(t *testing.T) {
	e := newEnv(t, nil) // the default store, on the test's clock
	id := postResponse(t, e, key, responsesBody)
	e.clock.Advance(httpapi.DefaultStoreTTL - time.Second)
	if w := do(e.h, "GET", "/v1/responses/"+id, key, ""); w.Code != 200 {
		t.Fatalf("before the TTL: %d", w.Code)
	}
	e.clock.Advance(time.Second)
	if w := do(e.h, "GET", "/v1/responses/"+id, key, ""); w.Code != 404 {
		t.Errorf("after the TTL: %d", w.Code)
	}
	w := do(e.h, "POST", "/v1/responses", key, `{"model":"core-2-5-mini","previous_response_id":"`+id+`","input":"x"}`)
	if w.Code != 404 {
		t.Errorf("continuing an expired response: %d", w.Code)
	}
}

// failingStore fails every call.
type failingStore struct{}

func (failingStore) Get(context.Context, string, string) (httpapi.StoredResponse, error) {
	return httpapi.StoredResponse{}, errors.New("store down")
}
func (failingStore) Put(context.Context, string, httpapi.StoredResponse) error {
	return errors.New("store down")
}
func (failingStore) Delete(context.Context, string, string) error { return errors.New("store down") }

func TestStoreFailure(t *testing.T) {
	e := newEnv(t, func(c *httpapi.Config, _ *fakeEngine) { c.Store = failingStore{} })
	// Failing to store does not fail the response, but is logged.
	if w := do(e.h, "POST", "/v1/responses", key, responsesBody); w.Code != 200 {
		t.Errorf("POST: %d %s", w.Code, w.Body)
	}
	if !strings.Contains(e.logs.String(), "storing a response failed") {
		t.Error("the failure to store is not logged")
	}
	// A store that cannot answer is a 500, not a 404.
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/v1/responses/resp_1", ""},
		{"DELETE", "/v1/responses/resp_1", ""},
		{"POST", "/v1/responses", `{"model":"core-2-5-mini","previous_response_id":"resp_1","input":"x"}`},
	} {
		w := do(e.h, tc.method, tc.path, key, tc.body)
		if typ, code, _, msg := errorOf(t, w.Body.Bytes()); w.Code != 500 || typ != "api_error" || code != "server_error" || strings.Contains(msg, "store down") {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, w.Code, w.Body)
		}
	}
}

func storedResponse(id, text string) httpapi.StoredResponse {
	return httpapi.StoredResponse{
		Response:   formats.Response{ID: id, Object: "response", OutputText: text},
		Transcript: []inference.Message{inference.Text(inference.RoleUser, text)},
	}
}

func TestMemoryStore(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	t.Run("ttl", func(t *testing.T) {
		s, err := httpapi.NewMemoryStore(httpapi.MemoryStoreConfig{TTL: time.Minute, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Put(ctx, "a", storedResponse("r1", "one"))
		c.Advance(30 * time.Second)
		_ = s.Put(ctx, "a", storedResponse("r2", "two"))
		c.Advance(30 * time.Second)
		if _, err := s.Get(ctx, "a", "r1"); !errors.Is(err, httpapi.ErrNotFound) {
			t.Errorf("r1 after its TTL: %v", err)
		}
		if got, err := s.Get(ctx, "a", "r2"); err != nil || got.Response.OutputText != "two" {
			t.Errorf("r2 within its TTL: %v", err)
		}
		if s.Len() != 1 {
			t.Errorf("Len %d", s.Len())
		}
	})
	t.Run("owners", func(t *testing.T) {
		s, _ := httpapi.NewMemoryStore(httpapi.MemoryStoreConfig{Now: c.Now})
		_ = s.Put(ctx, "a", storedResponse("r1", "a's"))
		_ = s.Put(ctx, "b", storedResponse("r1", "b's"))
		if got, _ := s.Get(ctx, "a", "r1"); got.Response.OutputText != "a's" {
			t.Errorf("a got %q", got.Response.OutputText)
		}
		if err := s.Delete(ctx, "c", "r1"); !errors.Is(err, httpapi.ErrNotFound) {
			t.Errorf("c deleted r1: %v", err)
		}
		if err := s.Delete(ctx, "b", "r1"); err != nil {
			t.Error(err)
		}
		if _, err := s.Get(ctx, "a", "r1"); err != nil {
			t.Errorf("b's delete removed a's: %v", err)
		}
	})
	t.Run("entries", func(t *testing.T) {
		s, _ := httpapi.NewMemoryStore(httpapi.MemoryStoreConfig{MaxEntries: 2, Now: c.Now})
		for _, id := range []string{"r1", "r2", "r3"} {
			_ = s.Put(ctx, "a", storedResponse(id, id))
		}
		if _, err := s.Get(ctx, "a", "r1"); !errors.Is(err, httpapi.ErrNotFound) || s.Len() != 2 {
			t.Errorf("the oldest was not evicted: %v, %d", err, s.Len())
		}
		// Putting an id again replaces it.
		_ = s.Put(ctx, "a", storedResponse("r3", "again"))
		if got, _ := s.Get(ctx, "a", "r3"); got.Response.OutputText != "again" || s.Len() != 2 {
			t.Errorf("replace: %q, %d", got.Response.OutputText, s.Len())
		}
	})
	t.Run("bytes", func(t *testing.T) {
		s, _ := httpapi.NewMemoryStore(httpapi.MemoryStoreConfig{MaxBytes: 2000, Now: c.Now})
		big := strings.Repeat("x", 600)
		for _, id := range []string{"r1", "r2", "r3", "r4"} {
			if err := s.Put(ctx, "a", storedResponse(id, big)); err != nil {
				t.Fatal(err)
			}
		}
		if s.Len() >= 4 {
			t.Errorf("the byte bound kept %d entries", s.Len())
		}
		if _, err := s.Get(ctx, "a", "r4"); err != nil {
			t.Errorf("the newest was evicted: %v", err)
		}
		if err := s.Put(ctx, "a", storedResponse("huge", strings.Repeat("x", 3000))); err == nil {
			t.Error("a response over MaxBytes was stored")
		}
	})
	if _, err := httpapi.NewMemoryStore(httpapi.MemoryStoreConfig{TTL: -1}); err == nil {
		t.Error("negative TTL accepted")
	}
}

// orderStore records, when a response is put, whether the client had
// already been sent the end of the stream.
type orderStore struct {
	*httpapi.MemoryStore
	w           *httptest.ResponseRecorder
	sentEndedAt []bool
}

func (s *orderStore) Put(ctx context.Context, owner string, r httpapi.StoredResponse) error {
	s.sentEndedAt = append(s.sentEndedAt, strings.Contains(s.w.Body.String(), "response.completed"))
	return s.MemoryStore.Put(ctx, owner, r)
}

// TestStoredBeforeStreamEnds checks that a streamed response is stored
// before the client reads response.completed, so that a client may
// continue it at once.
func TestStoredBeforeStreamEnds(t *testing.T) {
	mem, _ := httpapi.NewMemoryStore(httpapi.MemoryStoreConfig{})
	store := &orderStore{MemoryStore: mem, w: httptest.NewRecorder()}
	e := newEnv(t, func(c *httpapi.Config, _ *fakeEngine) { c.Store = store })
	req := httptest.NewRequest("POST", "/v1/responses", strings.NewReader(streaming(responsesBody)))
	req.Header.Set("Authorization", "Bearer "+key)
	e.h.ServeHTTP(store.w, req)
	if len(store.sentEndedAt) != 1 || store.sentEndedAt[0] || !strings.Contains(store.w.Body.String(), "response.completed") {
		t.Errorf("put %d times, after the end was sent: %v", len(store.sentEndedAt), store.sentEndedAt)
	}
}
