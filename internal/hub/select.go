package hub

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// info is the part of the hub's answer to GET
// /api/models/{repo}/revision/{rev}?blobs=true that Pull reads.
type info struct {
	// SHA is the commit the revision names.
	SHA      string    `json:"sha"`
	Siblings []sibling `json:"siblings"`
}

// sibling is one file of the revision.
type sibling struct {
	// RFilename is the file's path in the repository.
	RFilename string `json:"rfilename"`
	// Size is the file's size; for a file in LFS, LFS.Size is.
	Size int64 `json:"size"`
	// LFS is set for files stored in LFS (or Xet), which model files are:
	// the SHA-256 of their content and their size.
	LFS *struct {
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	} `json:"lfs"`
}

// file is one file to download: its path in the repository, the size and
// the SHA-256 (hex) that the hub publishes.
type file struct {
	name   string
	size   int64
	sha256 string
}

// splitPart matches the name of one part of a split GGUF, as llama.cpp's
// gguf-split writes it: NAME-00001-of-00003.gguf.
var splitPart = regexp.MustCompile(`(?i)^(.*)-(\d{5})-of-(\d{5})\.gguf$`)

// hexSHA256 matches a SHA-256 in lower-case hex.
var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// hexCommit matches a git commit id.
var hexCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// defaultQuant is the quantization a reference without one picks among
// several, as Ollama does for hf.co references.
const defaultQuant = "Q4_K_M"

// selection is what Pull downloads for a reference: the model's parts in
// order, and the projector beside it, if any.
type selection struct {
	parts     []file
	projector *file
}

// isProjector says whether the repository path p names a projector file.
func isProjector(p string) bool {
	b := strings.ToLower(path.Base(p))
	return strings.HasPrefix(b, "mmproj") && strings.HasSuffix(b, ".gguf")
}

// hasQuant says whether the file name base carries the quantization q as
// a whole word: bounded by the start, the end, '-' or '.', so that Q4_K
// does not match Q4_K_M. Case is ignored.
func hasQuant(base, q string) bool {
	base, q = strings.ToLower(base), strings.ToLower(q)
	for i := 0; ; {
		j := strings.Index(base[i:], q)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(q)
		before := start == 0 || base[start-1] == '-' || base[start-1] == '.'
		after := end == len(base) || base[end] == '-' || base[end] == '.'
		if before && after {
			return true
		}
		i = start + 1
	}
}

// models groups the revision's model files (.gguf, projectors left out)
// by model: a split model's parts under its first part's name. It returns
// the groups' first names, sorted.
func models(files map[string]file) []string {
	var out []string
	for name := range files {
		if !strings.HasSuffix(strings.ToLower(name), ".gguf") || isProjector(name) {
			continue
		}
		if m := splitPart.FindStringSubmatch(name); m != nil && m[2] != "00001" {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// choose picks the files of r among the revision's files.
func choose(r Ref, files map[string]file) (selection, error) {
	name := r.File
	if name == "" {
		all := models(files)
		var cands []string
		switch {
		case r.Quant != "":
			for _, m := range all {
				if hasQuant(strings.TrimSuffix(path.Base(m), path.Ext(m)), r.Quant) || hasQuant(path.Dir(m), r.Quant) {
					cands = append(cands, m)
				}
			}
		case len(all) == 1:
			cands = all
		default:
			for _, m := range all {
				if hasQuant(strings.TrimSuffix(path.Base(m), path.Ext(m)), defaultQuant) {
					cands = append(cands, m)
				}
			}
		}
		switch {
		case len(all) == 0:
			return selection{}, fmt.Errorf("hub: %s has no GGUF model file at %s", r.Repo, r.Revision)
		case len(cands) == 0 && r.Quant == "":
			return selection{}, fmt.Errorf("hub: %s has %d GGUF models and none is %s: name one, %s", r.Repo, len(all), defaultQuant, listing(r, all))
		case len(cands) == 0:
			return selection{}, fmt.Errorf("hub: %s has no %s model: %s", r.Repo, r.Quant, listing(r, all))
		case len(cands) > 1:
			return selection{}, fmt.Errorf("hub: %s has %d models that match %q: name the file, %s", r.Repo, len(cands), cmpQuant(r.Quant), listing(r, cands))
		}
		name = cands[0]
	}
	f, ok := files[name]
	if !ok {
		return selection{}, fmt.Errorf("hub: %s has no file %s at %s", r.Repo, name, r.Revision)
	}
	var s selection
	if m := splitPart.FindStringSubmatch(name); m != nil {
		var n int
		fmt.Sscanf(m[3], "%d", &n)
		if n < 1 || n > 999 {
			return selection{}, fmt.Errorf("hub: %s: %d parts, want 1 to 999", name, n)
		}
		for i := 1; i <= n; i++ {
			// The parts' names differ only in their number.
			p := fmt.Sprintf("%s-%05d-of-%s%s", m[1], i, m[3], name[len(name)-len(".gguf"):])
			pf, ok := files[p]
			if !ok {
				return selection{}, fmt.Errorf("hub: %s has part %s but not %s", r.Repo, name, p)
			}
			s.parts = append(s.parts, pf)
		}
	} else {
		s.parts = []file{f}
	}
	s.projector = projectorFor(name, r.Quant, files)
	return s, nil
}

// cmpQuant names what a reference without a quantization matches.
func cmpQuant(q string) string {
	if q == "" {
		return defaultQuant
	}
	return q
}

// listing says which references would name the models.
func listing(r Ref, names []string) string {
	const most = 20
	var b strings.Builder
	b.WriteString("one of: ")
	for i, n := range names {
		if i == most {
			fmt.Fprintf(&b, " and %d more", len(names)-most)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(Ref{BaseURL: r.BaseURL, Repo: r.Repo, File: n, Revision: r.Revision}.String())
	}
	return b.String()
}

// projectorFor picks the projector in the model's folder: the one that
// carries the model's quantization, else F16, BF16, Q8_0, else the first
// by name. It returns nil where there is none.
func projectorFor(model, quant string, files map[string]file) *file {
	dir := path.Dir(model)
	var cands []string
	for name := range files {
		if isProjector(name) && path.Dir(name) == dir {
			cands = append(cands, name)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	slices.Sort(cands)
	for _, q := range []string{quant, "F16", "BF16", "Q8_0"} {
		if q == "" {
			continue
		}
		for _, c := range cands {
			if hasQuant(strings.TrimSuffix(path.Base(c), path.Ext(c)), q) {
				f := files[c]
				return &f
			}
		}
	}
	f := files[cands[0]]
	return &f
}

// maxFiles bounds the files of a revision that Pull reads.
const maxFiles = 100_000

// maxFileSize bounds one file's size: 1 TiB.
const maxFileSize = 1 << 40

// filesOf checks the hub's answer and returns its files by name: the
// commit a 40-digit hex id, each name a safe relative path, each GGUF in
// LFS with a SHA-256 and a size within bounds.
func filesOf(r Ref, in info) (map[string]file, error) {
	if !hexCommit.MatchString(in.SHA) {
		return nil, fmt.Errorf("hub: %s@%s: the hub's answer has commit %.64q, want 40 hex digits", r.Repo, r.Revision, in.SHA)
	}
	if len(in.Siblings) > maxFiles {
		return nil, fmt.Errorf("hub: %s@%s: %d files, want %d at most", r.Repo, r.Revision, len(in.Siblings), maxFiles)
	}
	files := make(map[string]file, len(in.Siblings))
	for _, s := range in.Siblings {
		if !strings.HasSuffix(strings.ToLower(s.RFilename), ".gguf") {
			continue // config files, READMEs: never downloaded
		}
		if !validFile(s.RFilename) {
			continue // never a path under the cache directory
		}
		f := file{name: s.RFilename, size: -1}
		if s.LFS != nil && hexSHA256.MatchString(s.LFS.SHA256) && s.LFS.Size > 0 && s.LFS.Size <= maxFileSize {
			f.size, f.sha256 = s.LFS.Size, s.LFS.SHA256
		}
		files[s.RFilename] = f
	}
	return files, nil
}
