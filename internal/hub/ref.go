package hub

import (
	"fmt"
	"net/url"
	"path"
	"strings"
)

// DefaultBaseURL is the hub that references without a scheme and host
// name: hf.co/ORG/REPO and ORG/REPO/FILE.gguf.
const DefaultBaseURL = "https://huggingface.co"

// Ref is a parsed model reference. Its zero value is not a reference; use
// ParseRef.
type Ref struct {
	// BaseURL is the hub's scheme and host: DefaultBaseURL, or the
	// scheme and host of a reference written as a URL
	// (http://127.0.0.1:8000/ORG/REPO:Q4_K_M, for a mirror or a test).
	BaseURL string
	// Repo is ORG/REPO.
	Repo string
	// File is the model file's path in the repository, or "" to pick it
	// by Quant.
	File string
	// Quant is the quantization to pick, as written (Q4_K_M); matched
	// without regard to case. "" with File "" picks the only model of
	// the repository, or its Q4_K_M.
	Quant string
	// Revision is a branch, tag or commit; "main" when the reference
	// names none.
	Revision string
}

// String returns the reference in the form ParseRef reads.
func (r Ref) String() string {
	var b strings.Builder
	if r.BaseURL == DefaultBaseURL {
		b.WriteString("hf.co/")
	} else {
		b.WriteString(r.BaseURL + "/")
	}
	b.WriteString(r.Repo)
	if r.File != "" {
		b.WriteString("/" + r.File)
	} else if r.Quant != "" {
		b.WriteString(":" + r.Quant)
	}
	if r.Revision != "main" {
		b.WriteString("@" + r.Revision)
	}
	return b.String()
}

// maxRefLen bounds a reference: repository names are at most 96
// characters on the hub, file paths a few hundred.
const maxRefLen = 1024

// ParseRef reads a model reference:
//
//	hf.co/ORG/REPO[:QUANT][@REV]
//	hf.co/ORG/REPO/PATH/FILE.gguf[@REV]
//	ORG/REPO/PATH/FILE.gguf[@REV]
//	https://HOST/ORG/REPO[:QUANT][@REV] (and /FILE.gguf)
//
// huggingface.co/ is taken as hf.co/. Names are checked, so that a
// reference cannot reach outside the cache directory or the hub's paths.
func ParseRef(s string) (Ref, error) {
	bad := func(format string, args ...any) (Ref, error) {
		return Ref{}, fmt.Errorf("hub: reference %q: %s", s, fmt.Sprintf(format, args...))
	}
	if len(s) > maxRefLen {
		return Ref{}, fmt.Errorf("hub: reference of %d bytes, want %d at most", len(s), maxRefLen)
	}
	r := Ref{BaseURL: DefaultBaseURL, Revision: "main"}
	rest := s
	switch {
	case strings.HasPrefix(rest, "https://") || strings.HasPrefix(rest, "http://"):
		scheme, after, _ := strings.Cut(rest, "://")
		host, p, _ := strings.Cut(after, "/")
		u, err := url.Parse(scheme + "://" + host)
		if err != nil || host == "" || u.User != nil || u.Host != host {
			return bad("want http(s)://HOST/ORG/REPO")
		}
		if host == "huggingface.co" || host == "hf.co" {
			if scheme != "https" {
				return bad("the hub at %s is https", host)
			}
		} else {
			r.BaseURL = scheme + "://" + host
		}
		rest = p
	case strings.HasPrefix(rest, "hf.co/"):
		rest = strings.TrimPrefix(rest, "hf.co/")
	case strings.HasPrefix(rest, "huggingface.co/"):
		rest = strings.TrimPrefix(rest, "huggingface.co/")
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest, r.Revision = rest[:i], rest[i+1:]
		if !validRevision(r.Revision) {
			return bad("revision %q: want a branch, tag or commit", r.Revision)
		}
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 2 {
		return bad("want ORG/REPO")
	}
	org, repo := parts[0], parts[1]
	if len(parts) == 2 {
		var quant bool
		repo, r.Quant, quant = strings.Cut(repo, ":")
		if quant && !validName(r.Quant) {
			return bad("quantization %q: want letters, digits, '_', '-' or '.'", r.Quant)
		}
	}
	if !validName(org) || !validName(repo) {
		return bad("repository %q: want ORG/REPO, each letters, digits, '_', '-' or '.'", org+"/"+repo)
	}
	r.Repo = org + "/" + repo
	if len(parts) > 2 {
		r.File = strings.Join(parts[2:], "/")
		if !validFile(r.File) {
			return bad("file %q: want a relative path of names", r.File)
		}
		if !strings.HasSuffix(strings.ToLower(r.File), ".gguf") {
			return bad("file %q: want a .gguf file", r.File)
		}
	}
	return r, nil
}

// validName says whether s is a repository, organization or quantization
// name: letters, digits, '_', '-', '.', and not "." or "..".
func validName(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 96 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// validFile says whether p is a file path in a repository that is safe to
// make a path under the cache directory of: names joined by '/', none
// empty, "." or "..", without a backslash, a colon or a control character.
func validFile(p string) bool {
	if p == "" || len(p) > 512 || path.Clean(p) != p {
		return false
	}
	for name := range strings.SplitSeq(p, "/") {
		if name == "" || name == "." || name == ".." || strings.HasPrefix(name, ".") {
			return false
		}
		for _, c := range name {
			if c < 0x20 || c == 0x7f || c == '\\' || c == ':' || c == '*' || c == '?' || c == '"' || c == '<' || c == '>' || c == '|' {
				return false
			}
		}
	}
	return true
}

// validRevision says whether s is a branch, tag or commit name that the
// resolve URL can carry (escaped): refs/pr/1 included.
func validRevision(s string) bool {
	if s == "" || len(s) > 256 || strings.Contains(s, "..") {
		return false
	}
	for _, c := range s {
		if c <= 0x20 || c == 0x7f || c == '\\' || c == '@' || c == ':' || c == '?' || c == '#' || c == '%' {
			return false
		}
	}
	return true
}
