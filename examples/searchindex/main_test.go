package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	docs := t.TempDir()
	for name, text := range map[string]string{
		"intro.md":  "# Introduction\n\nThe engine decodes several sequences at once.\n",
		"faq.html":  "<title>FAQ</title><p>Questions about <b>quotas</b>.</p>",
		"skip.json": `{"quotas": true}`,
	} {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	index := filepath.Join(t.TempDir(), "index")
	tests := []struct {
		name    string
		args    []string
		want    []string // lines the output must hold
		wantErr string
	}{
		{"index", []string{"-index", index, "-base-url", "https://docs.example.com/", docs},
			[]string{"indexed 2 documents from " + docs}, ""},
		{"query", []string{"-index", index, "-query", "quotas"},
			[]string{"1. FAQ", "   https://docs.example.com/faq.html", "   Questions about quotas."}, ""},
		{"domain filter", []string{"-index", index, "-query", "quotas", "-domain", "other.org"},
			[]string{"no results"}, ""},
		{"count", []string{"-index", index, "-query", "sequences quotas", "-count", "1"}, nil, ""},
		{"no index", []string{"-query", "x"}, nil, "-index DIR is required"},
		{"nothing to do", []string{"-index", index}, nil, "give FOLDERs"},
		{"bad count", []string{"-index", index, "-query", "x", "-count", "99"}, nil, "query.count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			err := run(t.Context(), tt.args, &out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one that says %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(out.String(), "\n")
			for _, w := range tt.want {
				found := false
				for _, l := range lines {
					found = found || l == w
				}
				if !found {
					t.Errorf("output %q lacks the line %q", out.String(), w)
				}
			}
			if tt.name == "count" && (!strings.HasPrefix(out.String(), "1. ") || strings.Contains(out.String(), "\n2. ")) {
				t.Errorf("output %q wants exactly one result", out.String())
			}
		})
	}
}
