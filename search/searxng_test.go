package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// searxngBody is a SearXNG JSON answer holding results.
func searxngBody(results ...map[string]any) []byte {
	b, err := json.Marshal(map[string]any{
		"query":             "q",
		"number_of_results": 0,
		"results":           results,
		"answers":           []any{},
		"suggestions":       []any{},
	})
	if err != nil {
		panic(err)
	}
	return b
}

func hit(u string) map[string]any {
	return map[string]any{"url": u, "title": "T " + u, "content": "C", "engine": "x", "publishedDate": nil}
}

// newSearXNGServer starts a fake SearXNG that records the query of each
// request and answers with handle.
func newSearXNGServer(t *testing.T, handle http.HandlerFunc) (*httptest.Server, *atomic.Pointer[url.Values]) {
	t.Helper()
	var last atomic.Pointer[url.Values]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		last.Store(&q)
		handle(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &last
}

func serveJSON(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}
}

func newClient(t *testing.T, cfg SearXNGConfig) *SearXNG {
	t.Helper()
	s, err := NewSearXNG(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSearXNGParses(t *testing.T) {
	body := searxngBody(
		map[string]any{"url": "https://go.dev/doc/", "title": "Documentation", "content": "The Go  docs.", "publishedDate": "2024-03-01T12:30:00"},
		map[string]any{"url": "http://example.com/a", "title": "<b>Bold</b> &amp; co", "content": "<span class=\"highlight\">Go</span> is\nfast", "publishedDate": "2023-11-05T08:00:00.123456+02:00"},
		map[string]any{"url": "ftp://example.com/file", "title": "ftp"},
		map[string]any{"url": "javascript:alert(1)", "title": "js"},
		map[string]any{"title": "no url"},
		map[string]any{"url": "/relative", "title": "relative"},
		map[string]any{"url": "https://go.dev/doc/", "title": "duplicate"},
		map[string]any{"url": 42, "title": "wrong type"},
		map[string]any{"url": " https://example.org/x ", "title": "", "content": nil, "publishedDate": "not a date", "pubdate": "2020-01-02 03:04:05+0000"},
	)
	srv, _ := newSearXNGServer(t, serveJSON(body))
	s := newClient(t, SearXNGConfig{URL: srv.URL})
	got, err := s.Search(t.Context(), Query{Text: "go", Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{
		{URL: "https://go.dev/doc/", Title: "Documentation", Content: "The Go docs.", Published: time.Date(2024, 3, 1, 12, 30, 0, 0, time.UTC)},
		{URL: "http://example.com/a", Title: "Bold & co", Content: "Go is fast", Published: time.Date(2023, 11, 5, 6, 0, 0, 123456000, time.UTC)},
		{URL: "https://example.org/x", Title: "https://example.org/x", Published: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.URL != w.URL || g.Title != w.Title || g.Content != w.Content || !g.Published.Equal(w.Published) {
			t.Errorf("result %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestSearXNGRequest(t *testing.T) {
	many := make([]map[string]any, 12)
	for i := range many {
		many[i] = hit(fmt.Sprintf("https://example.com/%d", i))
	}
	tests := []struct {
		name     string
		q        Query
		wantQ    string
		wantLang string // "-" for no language parameter
		wantURLs []string
	}{
		{"default count", Query{Text: "go"}, "go", "-",
			[]string{"https://example.com/0", "https://example.com/1", "https://example.com/2", "https://example.com/3", "https://example.com/4"}},
		{"count truncates", Query{Text: "go", Count: 2}, "go", "-",
			[]string{"https://example.com/0", "https://example.com/1"}},
		{"count over what there is", Query{Text: "go", Count: 20}, "go", "-", nil},
		{"locale as language", Query{Text: "käse", Locale: "de-CH", Count: 1}, "käse", "de-CH",
			[]string{"https://example.com/0"}},
	}
	srv, last := newSearXNGServer(t, serveJSON(searxngBody(many...)))
	s := newClient(t, SearXNGConfig{URL: srv.URL + "/"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Search(t.Context(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			params := *last.Load()
			if params.Get("q") != tt.wantQ || params.Get("format") != "json" {
				t.Errorf("sent q=%q format=%q, want q=%q format=json", params.Get("q"), params.Get("format"), tt.wantQ)
			}
			if lang, ok := params["language"]; tt.wantLang == "-" && ok || tt.wantLang != "-" && (len(lang) != 1 || lang[0] != tt.wantLang) {
				t.Errorf("sent language=%q, want %q", lang, tt.wantLang)
			}
			if tt.wantURLs == nil {
				if len(got) != len(many) {
					t.Errorf("got %d results, want all %d", len(got), len(many))
				}
				return
			}
			var urls []string
			for _, r := range got {
				urls = append(urls, r.URL)
			}
			if !reflect.DeepEqual(urls, tt.wantURLs) {
				t.Errorf("got %q, want %q", urls, tt.wantURLs)
			}
		})
	}
}

func TestSearXNGDomains(t *testing.T) {
	body := searxngBody(
		hit("https://badexample.com/1"),
		hit("https://example.com/2"),
		hit("https://example.com.evil.net/3"),
		hit("https://docs.example.com/4"),
		hit("https://evil.net/?to=https://example.com/5"),
		hit("https://EXAMPLE.COM./6"),
		hit("https://go.dev/7"),
		hit("https://example.com/8"),
	)
	tests := []struct {
		name     string
		domains  []string
		count    int
		wantQ    string
		wantURLs []string
	}{
		{"one domain adds site:", []string{"Example.com"}, 10, "tests site:example.com",
			[]string{"https://example.com/2", "https://docs.example.com/4", "https://EXAMPLE.COM./6", "https://example.com/8"}},
		{"filter before count", []string{"example.com"}, 2, "tests site:example.com",
			[]string{"https://example.com/2", "https://docs.example.com/4"}},
		{"two domains filter only", []string{"go.dev", "docs.example.com"}, 10, "tests",
			[]string{"https://docs.example.com/4", "https://go.dev/7"}},
		{"nothing allowed", []string{"nowhere.org"}, 10, "tests site:nowhere.org", nil},
	}
	srv, last := newSearXNGServer(t, serveJSON(body))
	s := newClient(t, SearXNGConfig{URL: srv.URL})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Search(t.Context(), Query{Text: "tests", Count: tt.count, Domains: tt.domains})
			if err != nil {
				t.Fatal(err)
			}
			if q := (*last.Load()).Get("q"); q != tt.wantQ {
				t.Errorf("sent q=%q, want %q", q, tt.wantQ)
			}
			var urls []string
			for _, r := range got {
				urls = append(urls, r.URL)
			}
			if !reflect.DeepEqual(urls, tt.wantURLs) {
				t.Errorf("got %q, want %q", urls, tt.wantURLs)
			}
		})
	}
}

func TestSearXNGRedirects(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		serveJSON(searxngBody(hit("https://evil.example/")))(w, r)
	}))
	t.Cleanup(other.Close)
	body := searxngBody(hit("https://example.com/moved"))
	srv, _ := newSearXNGServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/search":
			if r.URL.Query().Get("q") == "elsewhere" {
				http.Redirect(w, r, other.URL+"/search?"+r.URL.RawQuery, http.StatusFound)
				return
			}
			http.Redirect(w, r, "/searxng/search?"+r.URL.RawQuery, http.StatusMovedPermanently)
		case "/searxng/search":
			w.Write(body)
		case "/loop/search":
			http.Redirect(w, r, "/loop/search?"+r.URL.RawQuery, http.StatusFound)
		}
	})
	tests := []struct {
		name    string
		base    string
		text    string
		wantURL string // "" when an error is wanted
		wantErr string
	}{
		{"same host followed", srv.URL, "here", "https://example.com/moved", ""},
		{"other host refused", srv.URL, "elsewhere", "", "another host"},
		{"loop bounded", srv.URL + "/loop", "x", "", "10 times"},
	}
	s := func(base string) *SearXNG { return newClient(t, SearXNGConfig{URL: base}) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s(tt.base).Search(t.Context(), Query{Text: tt.text})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one that says %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].URL != tt.wantURL {
				t.Errorf("got %+v, want %s", got, tt.wantURL)
			}
		})
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the other host got %d requests, want 0", n)
	}

	// The caller's own CheckRedirect still has its say.
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("mine says no") }}
	_, err := newClient(t, SearXNGConfig{URL: srv.URL, Client: c}).Search(t.Context(), Query{Text: "here"})
	if err == nil || !strings.Contains(err.Error(), "mine says no") {
		t.Errorf("err = %v, want the caller's CheckRedirect error", err)
	}
}

func TestSearXNGBodyBound(t *testing.T) {
	big := searxngBody(map[string]any{"url": "https://example.com/", "content": strings.Repeat("x", 2000)})
	tests := []struct {
		name     string
		maxBytes int64
		chunked  bool
		wantErr  bool
	}{
		{"announced length over", 1024, false, true},
		{"streamed over", 1024, true, true},
		{"fits", int64(len(big)), true, false},
		{"default fits", 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newSearXNGServer(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.chunked {
					// Two writes with a flush between: no Content-Length.
					w.Write(big[:10])
					w.(http.Flusher).Flush()
					w.Write(big[10:])
					return
				}
				w.Header().Set("Content-Length", fmt.Sprint(len(big)))
				w.Write(big)
			})
			got, err := newClient(t, SearXNGConfig{URL: srv.URL, MaxBytes: tt.maxBytes}).Search(t.Context(), Query{Text: "x"})
			if tt.wantErr {
				if !errors.Is(err, ErrResponseTooLarge) {
					t.Fatalf("err = %v, want ErrResponseTooLarge", err)
				}
				return
			}
			if err != nil || len(got) != 1 {
				t.Fatalf("got %d results, err %v; want 1 result", len(got), err)
			}
			if n := utf8.RuneCountInString(got[0].Content); n > MaxSnippetRunes {
				t.Errorf("content has %d characters, more than %d", n, MaxSnippetRunes)
			}
		})
	}
}

func TestSearXNGErrors(t *testing.T) {
	tests := []struct {
		name       string
		handle     http.HandlerFunc
		wantStatus int
		wantErr    string
	}{
		{"forbidden", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", http.StatusForbidden) },
			403, "search.formats"},
		{"rate limited", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "slow down", http.StatusTooManyRequests) },
			429, "429 Too Many Requests"},
		{"server error", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) },
			502, "502"},
		{"html instead of json", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<!doctype html><p>hi")) },
			0, "other than its JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newSearXNGServer(t, tt.handle)
			_, err := newClient(t, SearXNGConfig{URL: srv.URL}).Search(t.Context(), Query{Text: "x"})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one that says %q", err, tt.wantErr)
			}
			var se *StatusError
			if errors.As(err, &se) != (tt.wantStatus != 0) || se != nil && se.StatusCode != tt.wantStatus {
				t.Errorf("err = %#v, want a StatusError with %d", err, tt.wantStatus)
			}
		})
	}
}

func TestSearXNGHangingServer(t *testing.T) {
	srv, _ := newSearXNGServer(t, func(w http.ResponseWriter, r *http.Request) {
		// Answer nothing until the client gives up, or fail the test
		// (an empty body) should the client wait seconds.
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	})
	tests := []struct {
		name    string
		timeout time.Duration
		ctx     func() (context.Context, context.CancelFunc)
	}{
		{"config timeout", 100 * time.Millisecond, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}},
		{"ctx deadline", 0, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			start := time.Now()
			_, err := newClient(t, SearXNGConfig{URL: srv.URL, Timeout: tt.timeout}).Search(ctx, Query{Text: "x"})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want context.DeadlineExceeded", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v, want about 100ms", d)
			}
		})
	}
}

func TestSearXNGRefusesInvalidQuery(t *testing.T) {
	var hits atomic.Int32
	srv, _ := newSearXNGServer(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	s := newClient(t, SearXNGConfig{URL: srv.URL})
	tests := []struct {
		q     Query
		field string
	}{
		{Query{}, "text"},
		{Query{Text: "x", Count: 21}, "count"},
		{Query{Text: "x", Domains: []string{"http://example.com"}}, "domains[0]"},
		{Query{Text: "x", Locale: "english please"}, "locale"},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			_, err := s.Search(t.Context(), tt.q)
			var qe *QueryError
			if !errors.As(err, &qe) || qe.Field != tt.field {
				t.Errorf("err = %v, want a QueryError for %s", err, tt.field)
			}
		})
	}
	if hits.Load() != 0 {
		t.Errorf("the server got %d requests for invalid queries", hits.Load())
	}
}

func TestNewSearXNG(t *testing.T) {
	tests := []struct {
		name    string
		cfg     SearXNGConfig
		wantErr string
	}{
		{"ok", SearXNGConfig{URL: "http://127.0.0.1:8888"}, ""},
		{"ok with path", SearXNGConfig{URL: "https://example.org/searxng/"}, ""},
		{"no URL", SearXNGConfig{}, "URL is required"},
		{"bad scheme", SearXNGConfig{URL: "ftp://example.org"}, "http or https"},
		{"relative", SearXNGConfig{URL: "example.org"}, "http or https"},
		{"no host", SearXNGConfig{URL: "http:///x"}, "no host"},
		{"query", SearXNGConfig{URL: "http://example.org/?q=1"}, "no query"},
		{"negative timeout", SearXNGConfig{URL: "http://example.org", Timeout: -1}, "negative"},
		{"negative max bytes", SearXNGConfig{URL: "http://example.org", MaxBytes: -1}, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSearXNG(tt.cfg)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func FuzzParseSearXNG(f *testing.F) {
	f.Add(searxngBody(hit("https://example.com/")))
	f.Add(searxngBody(map[string]any{"url": "javascript:alert(1)", "title": "<script>x</script>", "content": "&#0;<b"}))
	f.Add([]byte(`{"results":[{"url":"http://[::1]:80/","title":1},{"url":"HTTPS://A.B/\u0000"},null,"x",{"url":"http:x"}]}`))
	f.Add([]byte(`{"results":[{"url":"https://a.b/","publishedDate":"0000-00-00T00:00:00","content":"\xff\xfe"}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		results, err := parseSearXNG(body)
		if err != nil {
			return
		}
		for _, r := range results {
			u, err := url.Parse(r.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Fatalf("result URL %q is not an absolute http(s) URL", r.URL)
			}
			if utf8.RuneCountInString(r.Content) > MaxSnippetRunes || utf8.RuneCountInString(r.Title) > MaxSnippetRunes {
				t.Fatalf("result %+v is over the size bound", r)
			}
			if !utf8.ValidString(r.Title) || !utf8.ValidString(r.Content) {
				t.Fatalf("result %+v is not valid UTF-8", r)
			}
		}
	})
}
