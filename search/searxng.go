package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of SearXNGConfig.
const (
	DefaultSearXNGTimeout  = 10 * time.Second
	DefaultSearXNGMaxBytes = 4 << 20
)

// ErrResponseTooLarge is returned when a search service answers with a
// body larger than its configured bound.
var ErrResponseTooLarge = errors.New("search: response body too large")

// StatusError is returned when a search service answers with a status
// other than 2xx. It is a plain value.
type StatusError struct {
	// StatusCode is the HTTP status code, such as 403 or 429.
	StatusCode int
	// Status is the status line's text, such as "403 Forbidden".
	Status string
}

// Error names the status; a 403 from SearXNG most often means that the
// instance does not serve JSON.
func (e *StatusError) Error() string {
	msg := "search: searxng answered " + e.Status
	if e.StatusCode == http.StatusForbidden {
		msg += " (does its settings.yml list json under search.formats?)"
	}
	return msg
}

// SearXNGConfig configures a SearXNG client for NewSearXNG. Only URL is
// required: every other zero field means its default.
type SearXNGConfig struct {
	// URL is the base address of the SearXNG instance, such as
	// "http://127.0.0.1:8888" or "https://example.org/searxng/"; requests
	// go to URL + "/search". It must be http or https, without query or
	// fragment.
	URL string
	// Client sends the requests; nil means a client of its own. Either
	// way the SearXNG client follows redirects only to URL's host and
	// port, and only through Client's own CheckRedirect when it has one.
	Client *http.Client
	// Timeout bounds each Search, on top of its ctx; 0 means
	// DefaultSearXNGTimeout.
	Timeout time.Duration
	// MaxBytes bounds the response body; a larger body fails with
	// ErrResponseTooLarge. 0 means DefaultSearXNGMaxBytes.
	MaxBytes int64
}

// SearXNG searches the web through a SearXNG instance's JSON API
// (GET /search?q=…&format=json). The instance must list json under
// search.formats in its settings.yml. It is a Searcher, safe for
// concurrent use, and holds nothing to close (idle connections belong to
// its http.Client). The zero SearXNG is not usable: NewSearXNG makes one.
// Query.Location is ignored.
//
// Query.Locale goes as SearXNG's language parameter. A query with one
// allowed domain also carries a "site:" term, which most engines behind
// SearXNG honour; every result is filtered by Query.Domains afterwards,
// so fewer than Query.Count may come back.
type SearXNG struct {
	endpoint *url.URL
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
}

// NewSearXNG checks cfg and returns a client for the instance it names.
func NewSearXNG(cfg SearXNGConfig) (*SearXNG, error) {
	u, err := url.Parse(cfg.URL)
	switch {
	case cfg.URL == "":
		return nil, errors.New("search: SearXNGConfig.URL is required")
	case err != nil:
		return nil, fmt.Errorf("search: SearXNGConfig.URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("search: SearXNGConfig.URL %q must be http or https", cfg.URL)
	case u.Host == "":
		return nil, fmt.Errorf("search: SearXNGConfig.URL %q has no host", cfg.URL)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return nil, fmt.Errorf("search: SearXNGConfig.URL %q must have no query, fragment or user", cfg.URL)
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("search: SearXNGConfig.Timeout %v is negative", cfg.Timeout)
	case cfg.MaxBytes < 0:
		return nil, fmt.Errorf("search: SearXNGConfig.MaxBytes %d is negative", cfg.MaxBytes)
	}
	s := &SearXNG{
		endpoint: u.JoinPath("search"),
		timeout:  cfg.Timeout,
		maxBytes: cfg.MaxBytes,
	}
	if s.timeout == 0 {
		s.timeout = DefaultSearXNGTimeout
	}
	if s.maxBytes == 0 {
		s.maxBytes = DefaultSearXNGMaxBytes
	}
	var c http.Client
	if cfg.Client != nil {
		c = *cfg.Client
	}
	host, next := u.Host, c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !strings.EqualFold(req.URL.Host, host) {
			return fmt.Errorf("search: searxng redirected to another host, %q", req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("search: searxng redirected 10 times")
		}
		return nil
	}
	s.client = &c
	return s, nil
}

// Search asks SearXNG for q and returns up to q.Count results with http
// or https URLs, in SearXNG's order.
func (s *SearXNG) Search(ctx context.Context, q Query) ([]Result, error) {
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()

	text := q.Text
	if len(q.Domains) == 1 {
		text += " site:" + q.Domains[0]
	}
	params := url.Values{"q": {text}, "format": {"json"}, "pageno": {"1"}}
	if q.Locale != "" {
		params.Set("language", q.Locale)
	}
	u := *s.endpoint
	u.RawQuery = params.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("search: searxng request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("search: searxng: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &StatusError{StatusCode: resp.StatusCode, Status: resp.Status}
	}
	if resp.ContentLength > s.maxBytes {
		return nil, fmt.Errorf("%w: searxng announced %d bytes, more than %d", ErrResponseTooLarge, resp.ContentLength, s.maxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("search: searxng: reading the response: %w", err)
	}
	if int64(len(body)) > s.maxBytes {
		return nil, fmt.Errorf("%w: searxng sent more than %d bytes", ErrResponseTooLarge, s.maxBytes)
	}
	results, err := parseSearXNG(body)
	if err != nil {
		return nil, err
	}
	out := results[:0]
	for _, r := range results {
		if len(out) == q.Count {
			break
		}
		if AllowedURL(r.URL, q.Domains) {
			out = append(out, r)
		}
	}
	return out, nil
}

// searxngResult is one element of the results array of SearXNG's JSON
// answer. publishedDate is Python's datetime.isoformat(): with or without
// an offset and microseconds, or null.
type searxngResult struct {
	URL           string `json:"url"`
	Title         string `json:"title"`
	Content       string `json:"content"`
	PublishedDate string `json:"publishedDate"`
	// Older versions also sent "pubdate", "%Y-%m-%d %H:%M:%S%z".
	Pubdate string `json:"pubdate"`
}

// parseSearXNG turns the body of SearXNG's JSON answer into results:
// those with an absolute http or https URL only, each URL once, title and
// content as plain text, content bounded to MaxSnippetRunes. A result of
// unexpected shape is skipped rather than failing the whole answer.
func parseSearXNG(body []byte) ([]Result, error) {
	var doc struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("search: searxng answered something other than its JSON: %w", err)
	}
	out := make([]Result, 0, len(doc.Results))
	seen := make(map[string]bool, len(doc.Results))
	for _, raw := range doc.Results {
		var r searxngResult
		if json.Unmarshal(raw, &r) != nil {
			continue
		}
		link := strings.TrimSpace(r.URL)
		if !webURL(link) || seen[link] {
			continue
		}
		seen[link] = true
		title := plainText(r.Title)
		if title == "" {
			title = link
		}
		published := parsePublished(r.PublishedDate)
		if published.IsZero() {
			published = parsePublished(r.Pubdate)
		}
		out = append(out, Result{
			URL:       link,
			Title:     Truncate(title, MaxSnippetRunes),
			Content:   Truncate(plainText(r.Content), MaxSnippetRunes),
			Published: published,
		})
	}
	return out, nil
}

// webURL reports whether s is an absolute http or https URL with a host.
func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Hostname() != ""
}

// publishedLayouts are the forms of dates SearXNG sends. A date without
// an offset is taken as UTC.
var publishedLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04:05-0700",
	"2006-01-02",
}

// parsePublished parses a date SearXNG sent; zero when it is empty or in
// no known form.
func parsePublished(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	for _, layout := range publishedLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}
