package hub

import "testing"

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Ref
	}{
		{"hf.co/Qwen/Qwen3-0.6B-GGUF:Q8_0", Ref{BaseURL: DefaultBaseURL, Repo: "Qwen/Qwen3-0.6B-GGUF", Quant: "Q8_0", Revision: "main"}},
		{"huggingface.co/org/repo", Ref{BaseURL: DefaultBaseURL, Repo: "org/repo", Revision: "main"}},
		{"hf.co/org/repo:q4_k_m@v1.0", Ref{BaseURL: DefaultBaseURL, Repo: "org/repo", Quant: "q4_k_m", Revision: "v1.0"}},
		{"org/repo/sub/model-Q4_K_M.gguf@refs/pr/3", Ref{BaseURL: DefaultBaseURL, Repo: "org/repo", File: "sub/model-Q4_K_M.gguf", Revision: "refs/pr/3"}},
		{"https://huggingface.co/org/repo/m.gguf", Ref{BaseURL: DefaultBaseURL, Repo: "org/repo", File: "m.gguf", Revision: "main"}},
		{"http://127.0.0.1:8000/org/repo:Q8_0", Ref{BaseURL: "http://127.0.0.1:8000", Repo: "org/repo", Quant: "Q8_0", Revision: "main"}},
	} {
		got, err := ParseRef(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if back, err := ParseRef(got.String()); err != nil || back != got {
			t.Errorf("ParseRef(%q.String() = %q) = %+v, %v", tc.in, got.String(), back, err)
		}
	}
	for _, in := range []string{
		"", "hf.co/", "hf.co/org", "org/repo/../../etc/passwd.gguf", "org/repo/a/./b.gguf", "org/repo/model.bin",
		"hf.co/org/repo:", "hf.co/org/repo:Q4/x", "hf.co/../repo:Q4", "hf.co/org/repo@", "hf.co/org/repo@a..b",
		"http://user@host/org/repo", "http://huggingface.co/org/repo", "org/repo/.hidden.gguf", "org/repo/a\\b.gguf",
		"hf.co/org/re po", "org/repo//m.gguf",
	} {
		if r, err := ParseRef(in); err == nil {
			t.Errorf("ParseRef(%q) = %+v, want an error", in, r)
		}
	}
}

func TestHasQuant(t *testing.T) {
	for _, tc := range []struct {
		base, q string
		want    bool
	}{
		{"Qwen3-0.6B-Q4_K_M", "q4_k_m", true},
		{"Qwen3-0.6B-Q4_K_M", "Q4_K", false},
		{"model.Q8_0", "Q8_0", true},
		{"model-IQ4_XS-00001-of-00002", "iq4_xs", true},
		{"model-IQ4_XS", "Q4_XS", false},
	} {
		if got := hasQuant(tc.base, tc.q); got != tc.want {
			t.Errorf("hasQuant(%q, %q) = %v, want %v", tc.base, tc.q, got, tc.want)
		}
	}
}
