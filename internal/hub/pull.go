package hub

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Errors callers branch on; the errors of Pull wrap them.
var (
	// ErrOffline: the hub cannot be reached (no route, refused
	// connection, unknown host, timeout).
	ErrOffline = errors.New("hub: the hub cannot be reached")
	// ErrChecksum: a downloaded file's SHA-256 differs from the hub's;
	// the file was removed.
	ErrChecksum = errors.New("hub: checksum mismatch")
	// ErrNotFound: the hub has no such repository, revision or file, or
	// it is private or gated.
	ErrNotFound = errors.New("hub: not found")
)

// Progress is a download's state, reported to Config.Progress.
type Progress struct {
	// File is the file being downloaded, its path in the repository.
	File string
	// Done and Total are the bytes of all the reference's files that are
	// on disk (resumed and cached files count), and their sum.
	Done, Total int64
	// Rate is the download's speed in bytes a second over the last
	// seconds; 0 before it is known.
	Rate float64
}

// Pulled are the files of a pulled model, in the cache directory.
type Pulled struct {
	// Model is the model's file: its first part, for a split model.
	Model string
	// Parts are all its parts, Model first; one for a model in one file.
	Parts []string
	// Projector is the projector (mmproj) file beside the model, or "".
	Projector string
	// Commit is the commit that the reference's revision named.
	Commit string
	// Offline is set where the hub could not be reached and the files
	// are those that the revision named at the last Pull into the
	// directory, found there: the revision may have moved since.
	Offline bool
}

// Config says how Pull reaches the hub. Its zero value pulls from the
// reference's hub with a default HTTP client and reports no progress.
type Config struct {
	// HTTPClient makes the requests; nil is a client with dial and
	// header timeouts and no overall one, as downloads are long. Its
	// CheckRedirect is replaced: Pull follows up to 10 redirects, to
	// http and https URLs only.
	HTTPClient *http.Client
	// Progress, if set, is called as the download goes, at most a few
	// times a second and once at the end of each file, from the goroutine
	// that called Pull.
	Progress func(Progress)
	// Now is the clock of the progress rate; nil is time.Now.
	Now func() time.Time
	// Retries is how many times in a row a download that fails without
	// receiving a byte is tried again, with growing waits from
	// RetryWait; 0 is 4. A download that made progress before it broke
	// resumes at once.
	Retries int
	// RetryWait is the first wait before a retry; 0 is half a second.
	RetryWait time.Duration
}

// maxInfoBytes bounds the hub's JSON answer about a revision.
const maxInfoBytes = 32 << 20

// Pull downloads the model that ref names into dir, unless it is there
// already, and returns its files. See the package doc for what it fetches
// and how. Where the hub cannot be reached, a model that an earlier Pull
// of the same repository and revision left in dir is returned, with
// Offline set; else the error is ErrOffline. Several Pulls, in this
// process or others, may share dir; a Pull that finds another downloading
// a file waits for it. Cancelling ctx stops the download and leaves its
// partial file for the next Pull.
func Pull(ctx context.Context, cfg Config, ref Ref, dir string) (Pulled, error) {
	if ref.Repo == "" {
		return Pulled{}, errors.New("hub: empty reference")
	}
	p := &puller{cfg: cfg, ref: ref, now: cfg.Now}
	if p.now == nil {
		p.now = time.Now
	}
	p.client = cfg.HTTPClient
	if p.client == nil {
		t := &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   15 * time.Second,
			ResponseHeaderTimeout: 30 * time.Second,
			ForceAttemptHTTP2:     true,
		}
		defer t.CloseIdleConnections()
		p.client = &http.Client{Transport: t}
	}
	c := *p.client
	c.CheckRedirect = p.checkRedirect
	p.client = &c

	in, infoErr := p.info(ctx)
	offline := errors.Is(infoErr, ErrOffline)
	if offline {
		// What the revision named when last pulled, if it was.
		var ok bool
		if in, ok = readManifest(dir, ref); !ok {
			return Pulled{}, infoErr
		}
	} else if infoErr != nil {
		return Pulled{}, infoErr
	}
	files, err := filesOf(ref, in)
	if err != nil {
		return Pulled{}, err
	}
	sel, err := choose(ref, files)
	if err != nil {
		return Pulled{}, err
	}
	all := sel.parts
	if sel.projector != nil {
		all = append(all[:len(all):len(all)], *sel.projector)
	}
	for _, f := range all {
		if f.sha256 == "" {
			return Pulled{}, fmt.Errorf("hub: %s/%s: the hub publishes no SHA-256 and size for it (not in LFS), so it cannot be checked", ref.Repo, f.name)
		}
		p.total += f.size
	}
	base := filepath.Join(dir, filepath.FromSlash(ref.Repo), in.SHA)
	out := Pulled{Commit: in.SHA, Offline: offline}
	for i, f := range all {
		dst := filepath.Join(base, filepath.FromSlash(f.name))
		if offline {
			if ok, _ := present(dst, f.size); !ok {
				return Pulled{}, fmt.Errorf("%w, and %s is not in %s", infoErr, f.name, dir)
			}
			p.finish(f)
		} else if err := p.fetch(ctx, in.SHA, f, dst); err != nil {
			return Pulled{}, err
		}
		if sel.projector != nil && i == len(all)-1 {
			out.Projector = dst
		} else {
			out.Parts = append(out.Parts, dst)
		}
	}
	out.Model = out.Parts[0]
	if !offline {
		if err := writeManifest(dir, ref, in); err != nil {
			return Pulled{}, err
		}
	}
	return out, nil
}

// manifestPath is where the revision's commit and model files are kept
// after a Pull, for Pulls without a network: DIR/ORG/REPO/refs/REV.json,
// beside the commits' folders (whose names are 40 hex digits).
func manifestPath(dir string, ref Ref) string {
	return filepath.Join(dir, filepath.FromSlash(ref.Repo), "refs", url.PathEscape(ref.Revision)+".json")
}

// writeManifest keeps the revision's commit and GGUF files, atomically.
func writeManifest(dir string, ref Ref, in info) error {
	kept := info{SHA: in.SHA}
	for _, s := range in.Siblings {
		if strings.HasSuffix(strings.ToLower(s.RFilename), ".gguf") {
			kept.Siblings = append(kept.Siblings, s)
		}
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	path := manifestPath(dir, ref)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".manifest-*")
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("hub: %w", werr)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	return nil
}

// readManifest reads what writeManifest kept for the revision.
func readManifest(dir string, ref Ref) (info, bool) {
	f, err := os.Open(manifestPath(dir, ref))
	if err != nil {
		return info{}, false
	}
	defer f.Close()
	var in info
	if err := json.NewDecoder(io.LimitReader(f, maxInfoBytes)).Decode(&in); err != nil {
		return info{}, false
	}
	return in, true
}

// puller is one Pull's state.
type puller struct {
	cfg    Config
	ref    Ref
	client *http.Client
	now    func() time.Time
	// total is the bytes of all files; done those of the files before
	// the current one, cur those of the current one on disk.
	total, done, cur int64
	// last is when progress was last reported; rate samples the rate.
	last time.Time
	rate rateMeter
}

// report adds k downloaded bytes of the file name and calls
// Config.Progress: at the end of a file (end), and else at most ten times
// a second.
func (p *puller) report(name string, k int64, end bool) {
	now := p.now()
	p.cur += k
	p.rate.add(now, k)
	if p.cfg.Progress == nil || !end && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	p.cfg.Progress(Progress{File: name, Done: p.done + p.cur, Total: p.total, Rate: p.rate.rate})
}

// rateMeter measures a download's rate over windows of a few seconds.
// Its zero value has measured nothing.
type rateMeter struct {
	// t0 and b0 are the window's start and the bytes then; bytes is the
	// bytes since the meter started.
	t0        time.Time
	b0, bytes int64
	rate      float64
}

// add counts k bytes received at now.
func (m *rateMeter) add(now time.Time, k int64) {
	m.bytes += k
	if m.t0.IsZero() {
		// The first bytes came over a time unknown: the window starts
		// after them.
		m.t0, m.b0 = now, m.bytes
		return
	}
	dt := now.Sub(m.t0)
	if dt >= 200*time.Millisecond {
		m.rate = float64(m.bytes-m.b0) / dt.Seconds()
	}
	if dt >= 3*time.Second {
		m.t0, m.b0 = now, m.bytes
	}
}

// checkRedirect follows at most 10 redirects, to http(s) only, and checks
// what the hub says of an LFS file before its storage host is asked: the
// commit (X-Repo-Commit), the SHA-256 (X-Linked-Etag) and the size
// (X-Linked-Size) against what the API said.
func (p *puller) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return permanentError{errors.New("hub: more than 10 redirects")}
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return permanentError{fmt.Errorf("hub: redirect to a %q URL", req.URL.Scheme)}
	}
	if want, ok := req.Context().Value(expectKey{}).(expect); ok && req.Response != nil {
		h := req.Response.Header
		if c := h.Get("X-Repo-Commit"); c != "" && c != want.commit {
			return permanentError{fmt.Errorf("hub: %s: the hub serves commit %.40q, want %s", want.name, c, want.commit)}
		}
		if e := strings.Trim(strings.TrimPrefix(h.Get("X-Linked-Etag"), "W/"), `"`); e != "" && e != want.sha256 {
			return permanentError{fmt.Errorf("%w: %s: the hub's X-Linked-Etag is %.64q, its API said %s", ErrChecksum, want.name, e, want.sha256)}
		}
		if s := h.Get("X-Linked-Size"); s != "" && s != strconv.FormatInt(want.size, 10) {
			return permanentError{fmt.Errorf("hub: %s: the hub's X-Linked-Size is %.20q, its API said %d", want.name, s, want.size)}
		}
	}
	return nil
}

// expectKey keys the expect of a download request's context.
type expectKey struct{}

// expect is what the hub's headers must say of a file.
type expect struct {
	name, commit, sha256 string
	size                 int64
}

// info asks the hub for the revision's commit and files.
func (p *puller) info(ctx context.Context) (info, error) {
	u := p.ref.BaseURL + "/api/models/" + p.ref.Repo + "/revision/" + url.PathEscape(p.ref.Revision) + "?blobs=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return info{}, fmt.Errorf("hub: %w", err)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return info{}, p.netError(err)
	}
	defer resp.Body.Close()
	if err := p.status(resp, p.ref.Repo+"@"+p.ref.Revision); err != nil {
		return info{}, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxInfoBytes+1))
	if err != nil {
		return info{}, p.netError(err)
	}
	if len(body) > maxInfoBytes {
		return info{}, fmt.Errorf("hub: %s@%s: the hub's answer is over %d MiB", p.ref.Repo, p.ref.Revision, maxInfoBytes>>20)
	}
	var in info
	if err := json.Unmarshal(body, &in); err != nil {
		return info{}, fmt.Errorf("hub: %s@%s: the hub's answer: %w", p.ref.Repo, p.ref.Revision, err)
	}
	return in, nil
}

// status turns a response's status other than 200 and 206 into an error.
func (p *puller) status(resp *http.Response, what string) error {
	switch resp.StatusCode {
	case http.StatusOK, http.StatusPartialContent:
		return nil
	case http.StatusNotFound, http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("%w: %s on %s (%s): no such repository, revision or file, or it is private or gated", ErrNotFound, what, p.ref.BaseURL, resp.Status)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return fmt.Errorf("hub: %s on %s: %s: %.200q", what, p.ref.BaseURL, resp.Status, msg)
}

// netError wraps a failed request: ErrOffline for the errors of a network
// that does not reach the hub.
func (p *puller) netError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var dns *net.DNSError
	var op *net.OpError
	var ne net.Error
	if errors.As(err, &dns) || errors.As(err, &op) || errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%w: %s: %v (no network?)", ErrOffline, p.ref.BaseURL, err)
	}
	return fmt.Errorf("hub: %w", err)
}

// fetch makes dst the file f of the commit, unless it is there: it takes
// the file's lock, resumes or starts its partial file, checks its SHA-256
// and renames it into place.
func (p *puller) fetch(ctx context.Context, commit string, f file, dst string) error {
	if ok, err := present(dst, f.size); ok || err != nil {
		p.finish(f)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	unlock, err := lockFile(ctx, dst+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	// Another Pull may have finished it while this one waited.
	if ok, err := present(dst, f.size); ok || err != nil {
		p.finish(f)
		return err
	}
	part := dst + ".partial"
	w, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	defer w.Close()
	h := sha256.New()
	have, err := resume(w, h, f.size)
	if err != nil {
		return err
	}
	p.rate, p.cur = rateMeter{}, have
	ctx = context.WithValue(ctx, expectKey{}, expect{name: f.name, commit: commit, sha256: f.sha256, size: f.size})
	fails := 0
	for have < f.size {
		n, err := p.get(ctx, commit, f, w, h, have)
		have += n
		if err == nil {
			continue
		}
		if errors.Is(err, errRestart) {
			if err := restart(w, h); err != nil {
				return err
			}
			have, p.cur = 0, 0
			continue
		}
		if ctx.Err() != nil || !retryable(err) {
			return err
		}
		if n > 0 {
			fails = 0 // it broke after some bytes: resume at once
			continue
		}
		fails++
		if fails > cmp.Or(p.cfg.Retries, 4) {
			return err
		}
		wait := cmp.Or(p.cfg.RetryWait, 500*time.Millisecond) << (fails - 1)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.sha256 {
		w.Close()
		os.Remove(part)
		return fmt.Errorf("%w: %s: SHA-256 %s, the hub publishes %s; the download was removed", ErrChecksum, f.name, got, f.sha256)
	}
	if err := w.Sync(); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	if err := os.Rename(part, dst); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	p.finish(f)
	return nil
}

// finish counts the file f as on disk, and reports it.
func (p *puller) finish(f file) {
	p.done, p.cur = p.done+f.size, 0
	p.report(f.name, 0, true)
}

// present says whether dst is a file of the size: a finished download,
// which is renamed into place only once checked. A file of another size
// is an error: something else wrote it.
func present(dst string, size int64) (bool, error) {
	st, err := os.Stat(dst)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("hub: %w", err)
	case !st.Mode().IsRegular() || st.Size() != size:
		return false, fmt.Errorf("hub: %s is there with %d bytes, not the %d of the hub's file: remove it", dst, st.Size(), size)
	}
	return true, nil
}

// resume feeds the partial file's bytes to h and returns how many there
// are, with w's offset after them; a partial file longer than the file is
// started again.
func resume(w *os.File, h hash.Hash, size int64) (int64, error) {
	st, err := w.Stat()
	if err != nil {
		return 0, fmt.Errorf("hub: %w", err)
	}
	if st.Size() > size {
		return 0, restart(w, h)
	}
	n, err := io.Copy(h, io.LimitReader(w, st.Size()))
	if err != nil {
		return 0, fmt.Errorf("hub: reading %s: %w", w.Name(), err)
	}
	return n, nil
}

// restart empties the partial file.
func restart(w *os.File, h hash.Hash) error {
	h.Reset()
	if err := w.Truncate(0); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	if _, err := w.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	return nil
}

// errRestart: the server sent the whole file, not the range asked for.
var errRestart = errors.New("hub: the server ignored the range")

// retryableError marks an error worth trying again: a broken connection,
// a 5xx or 429 answer.
type retryableError struct{ err error }

func (e retryableError) Error() string { return e.err.Error() }
func (e retryableError) Unwrap() error { return e.err }

// permanentError marks an error of a redirect that no retry mends.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// retryable says whether err is worth trying again.
func retryable(err error) bool {
	var r retryableError
	return errors.As(err, &r)
}

// get downloads the file from offset have into w and h, and returns how
// many bytes it wrote. An answer of the whole file where a range was
// asked for is errRestart, when nothing was written yet.
func (p *puller) get(ctx context.Context, commit string, f file, w io.Writer, h hash.Hash, have int64) (int64, error) {
	u := p.ref.BaseURL + "/" + p.ref.Repo + "/resolve/" + commit + "/" + escapePath(f.name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, fmt.Errorf("hub: %w", err)
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := p.client.Do(req)
	if err != nil {
		var perm permanentError
		if errors.As(err, &perm) {
			return 0, perm.err
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, retryableError{p.netError(err)}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK && have > 0:
		return 0, errRestart
	case resp.StatusCode == http.StatusPartialContent:
		if have == 0 {
			// Nothing was asked for: 206 makes no sense.
			return 0, fmt.Errorf("hub: %s: a partial answer to a request for the whole file", f.name)
		}
		start, ok := rangeStart(resp.Header.Get("Content-Range"))
		if !ok || start != have {
			return 0, fmt.Errorf("hub: %s: asked for bytes from %d, got Content-Range %.80q", f.name, have, resp.Header.Get("Content-Range"))
		}
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return 0, retryableError{p.status(resp, f.name)}
	default:
		if err := p.status(resp, f.name); err != nil {
			return 0, err
		}
	}
	// Never more than the file's size, whatever the server sends.
	want := f.size - have
	if resp.ContentLength >= 0 && resp.ContentLength != want {
		return 0, fmt.Errorf("hub: %s: the storage host sends %d bytes, want %d", f.name, resp.ContentLength, want)
	}
	n, err := p.copy(f.name, io.MultiWriter(w, h), io.LimitReader(resp.Body, want))
	if err != nil {
		return n, err
	}
	if n < want {
		return n, retryableError{fmt.Errorf("hub: %s: the connection ended after %d of %d bytes", f.name, have+n, f.size)}
	}
	return n, nil
}

// rangeStart reads the first byte's offset of a Content-Range header:
// "bytes START-END/SIZE".
func rangeStart(s string) (int64, bool) {
	s, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, false
	}
	start, _, ok := strings.Cut(s, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(start, 10, 64)
	return n, err == nil && n >= 0
}

// escapePath escapes each name of a repository path for a URL.
func escapePath(p string) string {
	names := strings.Split(p, "/")
	for i, n := range names {
		names[i] = url.PathEscape(n)
	}
	return strings.Join(names, "/")
}

// copy copies r to w in chunks, reporting progress, and returns the bytes
// written. A read error is retryable (the connection broke); a write
// error is not.
func (p *puller) copy(name string, w io.Writer, r io.Reader) (int64, error) {
	buf := make([]byte, 256<<10)
	var n int64
	for {
		k, rerr := r.Read(buf)
		if k > 0 {
			if _, err := w.Write(buf[:k]); err != nil {
				return n, fmt.Errorf("hub: writing %s: %w", name, err)
			}
			n += int64(k)
			p.report(name, int64(k), false)
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, retryableError{fmt.Errorf("hub: %s: %w", name, rerr)}
		}
	}
}
