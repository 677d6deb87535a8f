package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/cache"
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

// stores are the stores the tests of stored responses run against: each
// opens a new, empty store on the clock now.
var stores = []struct {
	name string
	open func(t *testing.T, now func() time.Time) cache.Store
}{
	{"memory", func(t *testing.T, now func() time.Time) cache.Store {
		s, err := cache.NewMemoryStore(cache.MemoryConfig{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
	{"bolt", func(t *testing.T, now func() time.Time) cache.Store {
		return openBolt(t, filepath.Join(t.TempDir(), "responses.db"), now)
	}},
}

// openBolt opens a BoltStore that the test closes at its end.
func openBolt(t *testing.T, path string, now func() time.Time) *cache.BoltStore {
	t.Helper()
	s, err := cache.OpenBolt(path, cache.BoltConfig{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// withStore sets the store of a test's configuration: open's, on the
// configuration's clock.
func withStore(t *testing.T, open func(*testing.T, func() time.Time) cache.Store) func(*httpapi.Config, *fakeEngine) {
	return func(c *httpapi.Config, _ *fakeEngine) { c.Store = open(t, c.Now) }
}

// count returns the number of records in s.
func count(t *testing.T, s cache.Store) int {
	t.Helper()
	switch s := s.(type) {
	case *cache.MemoryStore:
		return s.Len()
	case *cache.BoltStore:
		n, err := s.Len()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	t.Fatalf("count of a %T", s)
	return 0
}

func TestPreviousResponse(t *testing.T) {
	for _, st := range stores {
		for _, stream := range []bool{false, true} {
			t.Run(st.name+"/"+map[bool]string{false: "blocking", true: "streaming"}[stream], func(t *testing.T) {
				testPreviousResponse(t, newEnv(t, withStore(t, st.open)), stream)
			})
		}
	}
}

func testPreviousResponse(t *testing.T, e *env, stream bool) {
	first := `{"model":"core-2-5-mini","instructions":"Be terse.","input":"first"}`
	var id string
	if stream {
		// A streamed response is stored under the id it streamed.
		w := do(e.h, "POST", "/v1/responses", key, streaming(first))
		if !strings.Contains(finalEvent(w.Body.String()), "response.completed") {
			t.Fatalf("stream: %s", w.Body)
		}
		id = responseID(t, finalEvent(w.Body.String()))
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
	// Its attempts changed nothing.
	if w := do(e.h, "GET", "/v1/responses/"+id, key, ""); w.Code != 200 {
		t.Errorf("GET after another key's DELETE: %d", w.Code)
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
}

// TestToolCallsCarriedOver checks that a transcript keeps everything of
// its messages: tool calls, tool results and reasoning.
func TestToolCallsCarriedOver(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			e := newEnv(t, withStore(t, st.open))
			id := postResponse(t, e, key, `{"model":"core-2-5-mini","input":[
				{"type":"message","role":"user","content":"Weather in Paris?"},
				{"type":"reasoning","content":[{"type":"reasoning_text","text":"Ask the tool."}]},
				{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
				{"type":"function_call_output","call_id":"call_1","output":"sunny"}]}`)
			first := e.eng.lastRequest(t).Messages
			postResponse(t, e, key, `{"model":"core-2-5-mini","previous_response_id":"`+id+`","input":"Thanks"}`)
			got := e.eng.lastRequest(t).Messages
			want := append(append(first, inference.Text(inference.RoleAssistant, "Hello world")), inference.Text(inference.RoleUser, "Thanks"))
			if len(first) != 3 || len(first[1].ToolCalls) != 1 || first[1].Reasoning == "" || first[2].ToolCallID != "call_1" {
				t.Fatalf("the first request is not what this test expects: %+v", first)
			}
			if !equalMessages(got, want) {
				t.Errorf("continued with\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// equalMessages reports whether a and b are equal, nil and empty slices
// alike.
func equalMessages(a, b []inference.Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Role != y.Role || x.Reasoning != y.Reasoning || x.ToolCallID != y.ToolCallID || x.Name != y.Name ||
			len(x.Content) != len(y.Content) || len(x.ToolCalls) != len(y.ToolCalls) {
			return false
		}
		for j := range x.Content {
			if x.Content[j].Text != y.Content[j].Text || !bytes.Equal(x.Content[j].Image, y.Content[j].Image) {
				return false
			}
		}
		for j := range x.ToolCalls {
			if x.ToolCalls[j] != y.ToolCalls[j] {
				return false
			}
		}
	}
	return true
}

// TestResponsesSurviveRestart stores responses in a file, closes it as
// the example server does on shutdown, and serves them again from a new
// Handler on the reopened file.
func TestResponsesSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "responses.db")
	c := newClock()
	s1, err := cache.OpenBolt(path, cache.BoltConfig{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	// Keys whose ids outlive the process: the responses are stored under
	// them.
	secret := []byte("a secret of 32 bytes or more.....")
	keys := func(t *testing.T) httpapi.KeyStore {
		k, err := httpapi.NewSharedKeys(secret, httpapi.APIKey{Key: key}, httpapi.APIKey{Key: otherKey})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	e := newEnv(t, func(cfg *httpapi.Config, _ *fakeEngine) { cfg.Store, cfg.Now, cfg.Keys = s1, c.Now, keys(t) })
	id := postResponse(t, e, key, `{"model":"core-2-5-mini","instructions":"Be terse.","input":"first"}`)
	body := do(e.h, "GET", "/v1/responses/"+id, key, "").Body.String()
	gone := postResponse(t, e, key, `{"model":"core-2-5-mini","input":"deleted before the restart"}`)
	if w := do(e.h, "DELETE", "/v1/responses/"+gone, key, ""); w.Code != 200 {
		t.Fatalf("DELETE: %d", w.Code)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}

	c.Advance(time.Hour)
	s2 := openBolt(t, path, c.Now)
	e = newEnv(t, func(cfg *httpapi.Config, _ *fakeEngine) { cfg.Store, cfg.Now, cfg.Keys = s2, c.Now, keys(t) })
	if w := do(e.h, "GET", "/v1/responses/"+id, key, ""); w.Code != 200 || w.Body.String() != body {
		t.Errorf("GET after the restart: %d %s\nwant %s", w.Code, w.Body, body)
	}
	if w := do(e.h, "GET", "/v1/responses/"+id, otherKey, ""); w.Code != 404 {
		t.Errorf("GET by another key after the restart: %d", w.Code)
	}
	if w := do(e.h, "GET", "/v1/responses/"+gone, key, ""); w.Code != 404 {
		t.Errorf("GET of a deleted response after the restart: %d", w.Code)
	}
	postResponse(t, e, key, `{"model":"core-2-5-mini","previous_response_id":"`+id+`","input":"second"}`)
	if got := texts(e.eng.lastRequest(t).Messages); got != "user:first|assistant:Hello world|user:second|" {
		t.Errorf("continued after the restart: %s", got)
	}
}

// TestStoredRecord checks what the store is given: the response under
// the key's id, never the key itself, as GET returns it.
func TestStoredRecord(t *testing.T) {
	mem, _ := cache.NewMemoryStore(cache.MemoryConfig{})
	rec := &recordingStore{MemoryStore: mem}
	e := newEnv(t, func(c *httpapi.Config, _ *fakeEngine) { c.Store = rec })
	id := postResponse(t, e, key, responsesBody)
	if len(rec.puts) != 1 {
		t.Fatalf("%d puts", len(rec.puts))
	}
	r := rec.puts[0]
	if r.ID != id || !strings.HasPrefix(r.Owner, "key_") || strings.Contains(r.Owner, key) {
		t.Errorf("stored as %q of %q", r.ID, r.Owner)
	}
	if got := do(e.h, "GET", "/v1/responses/"+id, key, "").Body.String(); strings.TrimSpace(got) != string(r.Response) {
		t.Errorf("GET returns %s, the store holds %s", got, r.Response)
	}
}

// recordingStore records the records put.
type recordingStore struct {
	*cache.MemoryStore
	puts []cache.Record
}

func (s *recordingStore) Put(ctx context.Context, r cache.Record) error {
	s.puts = append(s.puts, r)
	return s.MemoryStore.Put(ctx, r)
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
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			var store cache.Store
			e := newEnv(t, func(c *httpapi.Config, _ *fakeEngine) { store = st.open(t, c.Now); c.Store = store })
			for _, body := range []string{
				`{"model":"core-2-5-mini","input":"Hi","store":false}`,
				streaming(`{"model":"core-2-5-mini","input":"Hi","store":false}`),
			} {
				w := do(e.h, "POST", "/v1/responses", key, body)
				var id string
				if strings.Contains(body, "stream") {
					id = responseID(t, finalEvent(w.Body.String()))
				} else {
					id, _ = decode(t, w.Body.Bytes())["id"].(string)
				}
				if !strings.Contains(w.Body.String(), `"store":false`) {
					t.Errorf("response does not say store false: %s", w.Body)
				}
				if w := do(e.h, "GET", "/v1/responses/"+id, key, ""); w.Code != 404 {
					t.Errorf("store false was stored: %d", w.Code)
				}
				w = do(e.h, "POST", "/v1/responses", key, `{"model":"core-2-5-mini","previous_response_id":"`+id+`","input":"x"}`)
				if w.Code != 404 {
					t.Errorf("continuing a response with store false: %d", w.Code)
				}
			}
			if n := count(t, store); n != 0 {
				t.Errorf("store false left %d records", n)
			}
		})
	}
}

func TestResponseTTL(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			e := newEnv(t, withStore(t, st.open)) // the default TTL, on the test's clock
			id := postResponse(t, e, key, responsesBody)
			e.clock.Advance(cache.DefaultTTL - time.Second)
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
		})
	}
}

func TestDefaultStore(t *testing.T) {
	e := newEnv(t, nil) // no Store: a MemoryStore on the test's clock
	id := postResponse(t, e, key, responsesBody)
	if w := do(e.h, "GET", "/v1/responses/"+id, otherKey, ""); w.Code != 404 {
		t.Errorf("GET by another key: %d", w.Code)
	}
	e.clock.Advance(cache.DefaultTTL)
	if w := do(e.h, "GET", "/v1/responses/"+id, key, ""); w.Code != 404 {
		t.Errorf("after the TTL: %d", w.Code)
	}
}

// failingStore fails every call.
type failingStore struct{}

func (failingStore) Get(context.Context, string, string) (cache.Record, error) {
	return cache.Record{}, errors.New("store down")
}
func (failingStore) Put(context.Context, cache.Record) error      { return errors.New("store down") }
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

// TestUnreadableTranscript checks that a stored transcript that does not
// decode is a server error, never a continuation without its history.
func TestUnreadableTranscript(t *testing.T) {
	mem, _ := cache.NewMemoryStore(cache.MemoryConfig{})
	e := newEnv(t, func(c *httpapi.Config, _ *fakeEngine) { c.Store = mem })
	id := postResponse(t, e, key, responsesBody)
	for _, transcript := range []string{`not json`, `{"v":99,"messages":[]}`} {
		r := mustRecord(t, e, mem, id)
		r.Transcript = []byte(transcript)
		if err := mem.Put(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		w := do(e.h, "POST", "/v1/responses", key, `{"model":"core-2-5-mini","previous_response_id":"`+id+`","input":"x"}`)
		if w.Code != 500 {
			t.Errorf("transcript %s: %d %s", transcript, w.Code, w.Body)
		}
	}
}

// mustRecord returns the one record of mem with the given id.
func mustRecord(t *testing.T, e *env, mem *cache.MemoryStore, id string) cache.Record {
	t.Helper()
	r, err := mem.Get(context.Background(), keyID(t, e, key), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// orderStore records, when a response is put, whether the client had
// already been sent the end of the stream.
type orderStore struct {
	*cache.MemoryStore
	w           *httptest.ResponseRecorder
	sentEndedAt []bool
}

func (s *orderStore) Put(ctx context.Context, r cache.Record) error {
	s.sentEndedAt = append(s.sentEndedAt, strings.Contains(s.w.Body.String(), "response.completed"))
	return s.MemoryStore.Put(ctx, r)
}

// TestStoredBeforeStreamEnds checks that a streamed response is stored
// before the client reads response.completed, so that a client may
// continue it at once.
func TestStoredBeforeStreamEnds(t *testing.T) {
	mem, _ := cache.NewMemoryStore(cache.MemoryConfig{})
	store := &orderStore{MemoryStore: mem, w: httptest.NewRecorder()}
	e := newEnv(t, func(c *httpapi.Config, _ *fakeEngine) { c.Store = store })
	req := httptest.NewRequest("POST", "/v1/responses", strings.NewReader(streaming(responsesBody)))
	req.Header.Set("Authorization", "Bearer "+key)
	e.h.ServeHTTP(store.w, req)
	if len(store.sentEndedAt) != 1 || store.sentEndedAt[0] || !strings.Contains(store.w.Body.String(), "response.completed") {
		t.Errorf("put %d times, after the end was sent: %v", len(store.sentEndedAt), store.sentEndedAt)
	}
}
