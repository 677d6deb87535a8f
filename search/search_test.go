package search

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQueryValidate(t *testing.T) {
	long := strings.Repeat("a", MaxTextBytes+1)
	tests := []struct {
		name  string
		q     Query
		field string // "" when valid
	}{
		{"minimal", Query{Text: "go generics"}, ""},
		{"everything", Query{Text: "weather", Count: MaxCount, Locale: "en-US",
			Location: &Location{City: "Paris", Region: "Île-de-France", Country: "FR", Timezone: "Europe/Paris"},
			Domains:  []string{"example.com", "Docs.Example.org."}}, ""},
		{"multiline text", Query{Text: "two\nlines\tand tab"}, ""},
		{"text at the bound", Query{Text: long[:MaxTextBytes]}, ""},
		{"empty text", Query{}, "text"},
		{"blank text", Query{Text: " \n\t"}, "text"},
		{"long text", Query{Text: long}, "text"},
		{"invalid UTF-8", Query{Text: "a\xffb"}, "text"},
		{"control character", Query{Text: "a\x00b"}, "text"},
		{"negative count", Query{Text: "x", Count: -1}, "count"},
		{"count over the bound", Query{Text: "x", Count: MaxCount + 1}, "count"},
		{"locale with underscore", Query{Text: "x", Locale: "en_US"}, "locale"},
		{"locale too short", Query{Text: "x", Locale: "e"}, "locale"},
		{"locale with space", Query{Text: "x", Locale: "en US"}, "locale"},
		{"locale with digits first", Query{Text: "x", Locale: "12-US"}, "locale"},
		{"locale region digits", Query{Text: "x", Locale: "es-419"}, ""},
		{"country name", Query{Text: "x", Location: &Location{Country: "France"}}, "location.country"},
		{"country digits", Query{Text: "x", Location: &Location{Country: "12"}}, "location.country"},
		{"city too long", Query{Text: "x", Location: &Location{City: strings.Repeat("c", 101)}}, "location.city"},
		{"timezone control", Query{Text: "x", Location: &Location{Timezone: "UTC\n"}}, "location.timezone"},
		{"domain with scheme", Query{Text: "x", Domains: []string{"example.com", "https://example.org"}}, "domains[1]"},
		{"domain with path", Query{Text: "x", Domains: []string{"example.com/docs"}}, "domains[0]"},
		{"domain with port", Query{Text: "x", Domains: []string{"example.com:443"}}, "domains[0]"},
		{"empty domain", Query{Text: "x", Domains: []string{""}}, "domains[0]"},
		{"domain empty label", Query{Text: "x", Domains: []string{"example..com"}}, "domains[0]"},
		{"domain leading dot", Query{Text: "x", Domains: []string{".example.com"}}, "domains[0]"},
		{"domain hyphen edge", Query{Text: "x", Domains: []string{"-example.com"}}, "domains[0]"},
		{"domain wildcard", Query{Text: "x", Domains: []string{"*.example.com"}}, "domains[0]"},
		{"domain unicode", Query{Text: "x", Domains: []string{"bücher.de"}}, "domains[0]"},
		{"too many domains", Query{Text: "x", Domains: make([]string, MaxDomains+1)}, "domains"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.q.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var qe *QueryError
			if !errors.As(err, &qe) {
				t.Fatalf("Validate() = %v, want a *QueryError for %q", err, tt.field)
			}
			if qe.Field != tt.field {
				t.Errorf("Field = %q, want %q (%v)", qe.Field, tt.field, err)
			}
			if !strings.HasPrefix(err.Error(), "search: query."+tt.field+": ") {
				t.Errorf("Error() = %q, want it to name query.%s", err, tt.field)
			}
		})
	}
}

func TestQueryNormalize(t *testing.T) {
	in := Query{Text: "x", Domains: []string{"Docs.Example.COM."}}
	q, err := in.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if q.Count != DefaultCount {
		t.Errorf("Count = %d, want DefaultCount %d", q.Count, DefaultCount)
	}
	if len(q.Domains) != 1 || q.Domains[0] != "docs.example.com" {
		t.Errorf("Domains = %q, want [docs.example.com]", q.Domains)
	}
	if in.Domains[0] != "Docs.Example.COM." {
		t.Errorf("Normalize changed the caller's Domains to %q", in.Domains)
	}
	if q, err := (Query{Text: "x", Count: 3}).Normalize(); err != nil || q.Count != 3 {
		t.Errorf("Normalize(Count 3) = %+v, %v; want Count 3 kept", q, err)
	}
	q, err = Query{Text: "x", Count: 2, Domains: []string{"ok.com", "a/b"}}.Normalize()
	var qe *QueryError
	if !errors.As(err, &qe) || qe.Field != "domains[1]" {
		t.Errorf("Normalize(bad domain) error = %v, want a *QueryError for domains[1]", err)
	}
	if q.Text != "" || q.Count != 0 || q.Domains != nil {
		t.Errorf("Normalize(bad domain) = %+v, want the zero Query", q)
	}
}

func TestHostAllowed(t *testing.T) {
	domains := []string{"example.com", "go.dev"}
	tests := []struct {
		host string
		want bool
	}{
		{"example.com", true},
		{"docs.example.com", true},
		{"a.b.example.com", true},
		{"EXAMPLE.com", true},
		{"example.com.", true},
		{"go.dev", true},
		{"pkg.go.dev", true},
		{"badexample.com", false},
		{"example.com.evil.net", false},
		{"example.co", false},
		{"com", false},
		{"xample.com", false},
		{"example.comm", false},
		{"notgo.dev", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			if got := hostAllowed(tt.host, domains); got != tt.want {
				t.Errorf("hostAllowed(%q) = %v, want %v", tt.host, got, tt.want)
			}
		})
	}
	if !hostAllowed("anything.org", nil) {
		t.Error("no domains must allow every host")
	}
	// Domains as a caller wrote them, not normalized, follow the same rule.
	for host, want := range map[string]bool{
		"docs.example.com": true, "example.com": true, "badexample.com": false,
		"pkg.go.dev": true, "notgo.dev": false, "": false,
	} {
		if got := hostAllowed(host, []string{"", "Example.COM.", "GO.dev"}); got != want {
			t.Errorf("hostAllowed(%q, unnormalized) = %v, want %v", host, got, want)
		}
	}
}

func TestAllowedURL(t *testing.T) {
	domains := []string{"example.com"}
	tests := []struct {
		url  string
		want bool
	}{
		{"https://example.com/", true},
		{"https://docs.example.com:8443/a?b", true},
		{"https://user@example.com/", true},
		{"https://example.com.evil.net/", false},
		{"https://evil.net/?u=https://example.com/", false},
		{"https://evil.net/example.com", false},
		{"https://example.com@evil.net/", false},
		{"file:///srv/example.com/a.md", false},
		{"://bad", false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			if got := AllowedURL(tt.url, domains); got != tt.want {
				t.Errorf("AllowedURL(%q) = %v, want %v", tt.url, got, tt.want)
			}
		})
	}
	if !AllowedURL("file:///srv/a.md", nil) {
		t.Error("no domains must allow every URL")
	}
}

func TestHTMLText(t *testing.T) {
	tests := []struct {
		name, src, title, text string
	}{
		{"document",
			`<!doctype html><html><head><meta charset="utf-8"><title>Fish &amp; Chips</title>
			<style>p { color: red }</style><script>var x = "<p>no</p>";</script></head>
			<body><h1>Menu</h1><p>Cod,
			 <b>chips</b> and&nbsp;peas.</p><noscript>enable js</noscript><ul><li>one</li><li>two</li></ul></body></html>`,
			"Fish & Chips", "Menu\nCod, chips and peas.\none\ntwo"},
		{"fragment", `<span class="highlight">Go</span> is &lt;fast&gt;`, "", "Go is <fast>"},
		{"svg title is not the title", `<svg><title>icon</title></svg><p>text</p>`, "", "text"},
		{"second title ignored", `<title>One</title><title>Two</title>body`, "One", "body"},
		{"inline tags join words", `wo<i>r</i>d`, "", "word"},
		{"unclosed tag", `text <b`, "", "text"},
		{"comment", `a<!-- hidden -->b`, "", "ab"},
		{"self-closing br", `a<br/>b`, "", "a\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			title, text := HTMLText(tt.src)
			if title != tt.title || text != tt.text {
				t.Errorf("HTMLText = %q, %q; want %q, %q", title, text, tt.title, tt.text)
			}
		})
	}
}

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain  text\n here", "plain text here"},
		{"<b>bold</b> &amp; <em>more</em>", "bold & more"},
		{"AT&T", "AT&T"},
	}
	for _, tt := range tests {
		if got := plainText(tt.in); got != tt.want {
			t.Errorf("plainText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"hello world again", 12, "hello world…"},
		{"ééééééééééé", 5, "éééé…"},
		{"word", 1, "…"},
		{"word", 0, ""},
		{"word", -1, ""},
		{"", 0, ""},
	}
	for _, tt := range tests {
		got := Truncate(tt.in, tt.n)
		if got != tt.want || utf8.RuneCountInString(got) > max(tt.n, 0) {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
