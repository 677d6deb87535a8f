package localindex

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMarkdownTitle(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"atx", "intro\n\n# Hello `world`\n\n## Sub", "Hello world"},
		{"atx level 3 first", "### Deep\n# Top", "Deep"},
		{"closing hashes", "## Title ##\n", "Title"},
		{"hash without space", "#hashtag\n# Real", "Real"},
		{"in a fence", "```sh\n# comment\n```\n# After", "After"},
		{"tilde fence", "~~~\n# comment\n~~~~\nTitle\n=====\n", "Title"},
		{"setext", "The **Title**\n===\n\ntext", "The Title"},
		{"indented code", "    # code\n# Real", "Real"},
		{"none", "just text\n---\n", ""},
		{"crlf", "# Windows\r\n", "Windows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := markdownTitle(tt.src); got != tt.want {
				t.Errorf("markdownTitle = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSnippet(t *testing.T) {
	words := make([]string, 2000)
	for i := range words {
		words[i] = "filler"
	}
	words[1500] = "needle"
	text := strings.Join(words, " \n ")
	at := strings.Index(text, "needle")
	tests := []struct {
		name    string
		offsets []int
		prefix  string
		has     string
	}{
		{"around the match", []int{at}, "…", "needle"},
		{"no match", nil, "filler", "filler"},
		{"offset past the end", []int{len(text) + 10}, "…", "filler"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snippet(text, tt.offsets, 100)
			if n := utf8.RuneCountInString(s); n > 100 {
				t.Errorf("snippet has %d characters, more than 100", n)
			}
			if !strings.HasPrefix(s, tt.prefix) || !strings.Contains(s, tt.has) {
				t.Errorf("snippet = %q, want it to start with %q and hold %q", s, tt.prefix, tt.has)
			}
			if strings.Contains(s, "\n") || strings.Contains(s, "  ") {
				t.Errorf("snippet = %q, want whitespace collapsed", s)
			}
		})
	}
	if s := snippet("short  text", []int{0}, 100); s != "short text" {
		t.Errorf("short snippet = %q", s)
	}
}

func TestCollapseSpace(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"  a \n\t b  ", 10, "a b"},
		{"abc def", 3, "abc"},
		{"abc def", 4, "abc "},
		{"abc def", 5, "abc d"},
		{"ünï cödé", 5, "ünï c"},
		{"", 5, ""},
	}
	for _, tt := range tests {
		if got := collapseSpace(tt.in, tt.n); got != tt.want {
			t.Errorf("collapseSpace(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
