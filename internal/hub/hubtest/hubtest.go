// Package hubtest runs a fake Hugging Face hub for tests: the revision
// API, resolve URLs that redirect to a second server, a storage host, with
// the hub's headers (X-Repo-Commit, X-Linked-Etag, X-Linked-Size), ETags
// and Range requests, and faults to inject: a connection broken part way
// through a file, a corrupted file, a slow one.
package hubtest

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Hub is a fake hub and its storage host, each an httptest.Server. Its
// methods are safe for concurrent use.
type Hub struct {
	// URL is the hub's base URL, for references written as URLs.
	URL string
	// StorageURL is the storage host's base URL.
	StorageURL string

	close func()

	mu     sync.Mutex
	repos  map[string]*repo
	blobs  map[string][]byte // by SHA-256
	faults map[string]*Fault // by file name
	gets   map[string][]string
}

// repo is a repository: one commit, named by main.
type repo struct {
	commit string
	files  map[string][]byte
}

// Fault is what the storage host does wrong with one file. Its zero value
// does nothing wrong.
type Fault struct {
	// BreakAt, when positive, cuts the connection once the response
	// reaches this offset of the file, for the next Breaks responses
	// (Breaks < 0: every one).
	BreakAt int64
	Breaks  int
	// Corrupt serves the file with one byte changed, while the API and
	// the headers publish the right SHA-256.
	Corrupt bool
	// IgnoreRange answers Range requests with the whole file.
	IgnoreRange bool
	// Delay is slept before each 64 KiB the storage host writes.
	Delay time.Duration
}

// New starts a fake hub with no repositories, closed when tb's test ends.
func New(tb testing.TB) *Hub {
	h := Start()
	tb.Cleanup(h.Close)
	return h
}

// Start starts a fake hub with no repositories; the caller must Close it.
func Start() *Hub {
	h := &Hub{repos: map[string]*repo{}, blobs: map[string][]byte{}, faults: map[string]*Fault{}, gets: map[string][]string{}}
	storage := httptest.NewServer(http.HandlerFunc(h.storage))
	api, files := http.NewServeMux(), http.NewServeMux()
	api.HandleFunc("GET /api/models/{org}/{repo}/revision/{rev}", h.revision)
	files.HandleFunc("GET /{org}/{repo}/resolve/{rev}/{file...}", h.resolve)
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The two patterns overlap for ServeMux: /api/ goes first.
		if strings.HasPrefix(r.URL.Path, "/api/") {
			api.ServeHTTP(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
	h.URL, h.StorageURL = hub.URL, storage.URL
	h.close = func() {
		hub.Close()
		storage.Close()
	}
	return h
}

// Close stops the hub and its storage host.
func (h *Hub) Close() { h.close() }

// Add makes the repository ORG/REPO with the files, at a commit derived
// from their contents, and returns the commit. Files whose names end in
// .gguf are in LFS.
func (h *Hub) Add(name string, files map[string][]byte) string {
	c := sha1.New()
	for f, b := range files {
		fmt.Fprintf(c, "%s %d\n", f, len(b))
		c.Write(b)
	}
	commit := hex.EncodeToString(c.Sum(nil))
	h.mu.Lock()
	defer h.mu.Unlock()
	h.repos[name] = &repo{commit: commit, files: files}
	for _, b := range files {
		s := sha256.Sum256(b)
		h.blobs[hex.EncodeToString(s[:])] = b
	}
	return commit
}

// SetFault sets what the storage host does wrong with the file name (its
// path in its repository); the zero Fault clears it.
func (h *Hub) SetFault(name string, f Fault) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.faults[name] = &f
}

// Gets returns the Range header of each request the storage host had for
// the file name, "" for the whole file, in order.
func (h *Hub) Gets(name string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.gets[name]...)
}

// revision answers GET /api/models/{org}/{repo}/revision/{rev} as the
// hub does with ?blobs=true.
func (h *Hub) revision(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	rp, ok := h.repos[r.PathValue("org")+"/"+r.PathValue("repo")]
	h.mu.Unlock()
	if !ok || (r.PathValue("rev") != "main" && r.PathValue("rev") != rp.commit) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":"Repository not found"}`)
		return
	}
	type lfs struct {
		SHA256      string `json:"sha256"`
		Size        int    `json:"size"`
		PointerSize int    `json:"pointerSize"`
	}
	type sibling struct {
		RFilename string `json:"rfilename"`
		Size      int    `json:"size"`
		BlobID    string `json:"blobId"`
		LFS       *lfs   `json:"lfs,omitempty"`
	}
	out := struct {
		ID       string    `json:"id"`
		SHA      string    `json:"sha"`
		Siblings []sibling `json:"siblings"`
	}{ID: r.PathValue("org") + "/" + r.PathValue("repo"), SHA: rp.commit, Siblings: []sibling{}}
	for name, b := range rp.files {
		s := sibling{RFilename: name, Size: len(b), BlobID: fmt.Sprintf("%x", sha1.Sum(b))}
		if strings.HasSuffix(name, ".gguf") {
			sum := sha256.Sum256(b)
			s.LFS = &lfs{SHA256: hex.EncodeToString(sum[:]), Size: len(b), PointerSize: 134}
		}
		out.Siblings = append(out.Siblings, s)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// resolve answers GET /{org}/{repo}/resolve/{rev}/{file}: a redirect to
// the storage host for a file in LFS, with the hub's headers about it.
func (h *Hub) resolve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	rp, ok := h.repos[r.PathValue("org")+"/"+r.PathValue("repo")]
	h.mu.Unlock()
	var b []byte
	if ok && (r.PathValue("rev") == "main" || r.PathValue("rev") == rp.commit) {
		b, ok = rp.files[r.PathValue("file")]
	} else {
		ok = false
	}
	if !ok {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	sum := sha256.Sum256(b)
	hexSum := hex.EncodeToString(sum[:])
	w.Header().Set("X-Repo-Commit", rp.commit)
	w.Header().Set("X-Linked-Etag", `"`+hexSum+`"`)
	w.Header().Set("X-Linked-Size", strconv.Itoa(len(b)))
	w.Header().Set("ETag", `"`+hexSum+`"`)
	http.Redirect(w, r, h.StorageURL+"/blobs/"+hexSum+"?name="+r.PathValue("file"), http.StatusFound)
}

// storage serves a blob, honouring Range bytes=N- and the file's Fault.
func (h *Hub) storage(w http.ResponseWriter, r *http.Request) {
	sum := strings.TrimPrefix(r.URL.Path, "/blobs/")
	name := r.URL.Query().Get("name")
	h.mu.Lock()
	b, ok := h.blobs[sum]
	var f Fault
	if p := h.faults[name]; p != nil {
		f = *p
		if p.BreakAt > 0 && p.Breaks > 0 {
			p.Breaks--
		}
	}
	h.gets[name] = append(h.gets[name], r.Header.Get("Range"))
	h.mu.Unlock()
	if !ok {
		http.Error(w, "NoSuchKey", http.StatusNotFound)
		return
	}
	if f.Corrupt {
		b = append([]byte(nil), b...)
		b[len(b)/2] ^= 0xff
	}
	start := 0
	if rg := r.Header.Get("Range"); rg != "" && !f.IgnoreRange {
		s, ok := strings.CutPrefix(rg, "bytes=")
		s, ok2 := strings.CutSuffix(s, "-")
		n, err := strconv.Atoi(s)
		if !ok || !ok2 || err != nil || n < 0 || n >= len(b) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(b)))
			http.Error(w, "range not satisfiable", http.StatusRequestedRangeNotSatisfiable)
			return
		}
		start = n
	}
	w.Header().Set("ETag", `"`+sum+`"`)
	w.Header().Set("Accept-Ranges", "bytes")
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)-start))
	if start > 0 {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(b)-1, len(b)))
		w.WriteHeader(http.StatusPartialContent)
	}
	end := len(b)
	breaks := f.BreakAt > 0 && f.Breaks != 0 && int(f.BreakAt) >= start && int(f.BreakAt) < len(b)
	if breaks {
		end = int(f.BreakAt)
	}
	rc := http.NewResponseController(w)
	for off := start; off < end; {
		if f.Delay > 0 {
			time.Sleep(f.Delay)
		}
		n := min(64<<10, end-off)
		if _, err := w.Write(b[off : off+n]); err != nil {
			return
		}
		off += n
		rc.Flush()
	}
	if breaks {
		panic(http.ErrAbortHandler) // the connection drops mid-file
	}
}
