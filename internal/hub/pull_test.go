package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/hub"
	"github.com/inferkit/inferkit/internal/hub/hubtest"
)

// blob returns n bytes of a random content, the same for the same seed.
func blob(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// repoFiles are the files of the test repository org/model-GGUF: three
// single-file quantizations, a split one in a folder, two projectors and
// a README.
func repoFiles() map[string][]byte {
	return map[string][]byte{
		"Model-Q4_K_M.gguf":                   blob(1, 1<<20+7),
		"Model-Q4_K.gguf":                     blob(2, 1000),
		"Model-Q8_0.gguf":                     blob(3, 2000),
		"mmproj-Model-Q8_0.gguf":              blob(4, 300),
		"mmproj-Model-F16.gguf":               blob(5, 400),
		"BF16/Model-BF16-00001-of-00003.gguf": blob(6, 5000),
		"BF16/Model-BF16-00002-of-00003.gguf": blob(7, 5001),
		"BF16/Model-BF16-00003-of-00003.gguf": blob(8, 5002),
		"README.md":                           []byte("# model\n"),
	}
}

// modelHub starts a fake hub with org/model-GGUF, of repoFiles, and
// returns it, the files and their commit.
func modelHub(t *testing.T) (*hubtest.Hub, map[string][]byte, string) {
	h := hubtest.New(t)
	files := repoFiles()
	return h, files, h.Add("org/model-GGUF", files)
}

// fastRetries retries at once, so that tests do not sleep.
var fastRetries = hub.Config{RetryWait: time.Millisecond}

// pull parses ref and pulls it into dir.
func pull(t *testing.T, cfg hub.Config, ref, dir string) (hub.Pulled, error) {
	t.Helper()
	r, err := hub.ParseRef(ref)
	if err != nil {
		t.Fatal(err)
	}
	return hub.Pull(context.Background(), cfg, r, dir)
}

// sameFile fails t unless the file at path holds want.
func sameFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes that differ from the hub's %d", path, len(got), len(want))
	}
}

func TestPullPicksTheQuantizationAndProjector(t *testing.T) {
	h, files, commit := modelHub(t)
	dir := t.TempDir()
	var reports []hub.Progress
	cfg := hub.Config{Progress: func(p hub.Progress) { reports = append(reports, p) }}
	got, err := pull(t, cfg, h.URL+"/org/model-GGUF:q4_k_m", dir) // any case
	if err != nil {
		t.Fatal(err)
	}
	want := hub.Pulled{
		Model:     filepath.Join(dir, "org", "model-GGUF", commit, "Model-Q4_K_M.gguf"),
		Projector: filepath.Join(dir, "org", "model-GGUF", commit, "mmproj-Model-F16.gguf"),
		Commit:    commit,
	}
	want.Parts = []string{want.Model}
	if !equalPulled(got, want) {
		t.Fatalf("Pull = %+v, want %+v", got, want)
	}
	sameFile(t, got.Model, files["Model-Q4_K_M.gguf"])
	sameFile(t, got.Projector, files["mmproj-Model-F16.gguf"])
	total := int64(len(files["Model-Q4_K_M.gguf"]) + len(files["mmproj-Model-F16.gguf"]))
	last := reports[len(reports)-1]
	if last.Done != total || last.Total != total || last.File != "mmproj-Model-F16.gguf" {
		t.Errorf("last progress %+v, want Done = Total = %d", last, total)
	}
	for i := 1; i < len(reports); i++ {
		if reports[i].Done < reports[i-1].Done {
			t.Errorf("progress went back: %+v after %+v", reports[i], reports[i-1])
		}
	}

	// Pulled again: from the cache, without a download.
	again, err := pull(t, hub.Config{}, h.URL+"/org/model-GGUF:Q4_K_M", dir)
	if err != nil || !equalPulled(again, want) {
		t.Fatalf("second Pull = %+v, %v", again, err)
	}
	if g := h.Gets("Model-Q4_K_M.gguf"); len(g) != 1 {
		t.Errorf("storage GETs of the model: %q, want one", g)
	}

	// Q8_0 has a projector of its own quantization.
	q8, err := pull(t, hub.Config{}, h.URL+"/org/model-GGUF:Q8_0", dir)
	if err != nil || filepath.Base(q8.Projector) != "mmproj-Model-Q8_0.gguf" || filepath.Base(q8.Model) != "Model-Q8_0.gguf" {
		t.Fatalf("Pull :Q8_0 = %+v, %v", q8, err)
	}
	// No quantization: Q4_K_M, as Ollama picks.
	def, err := pull(t, hub.Config{}, h.URL+"/org/model-GGUF", dir)
	if err != nil || def.Model != want.Model {
		t.Fatalf("Pull without a quantization = %+v, %v", def, err)
	}
	// A file by name, at the commit.
	byName, err := pull(t, hub.Config{}, h.URL+"/org/model-GGUF/Model-Q4_K.gguf@"+commit, dir)
	if err != nil || filepath.Base(byName.Model) != "Model-Q4_K.gguf" {
		t.Fatalf("Pull by file name = %+v, %v", byName, err)
	}
}

// equalPulled compares two Pulled.
func equalPulled(a, b hub.Pulled) bool {
	return a.Model == b.Model && a.Projector == b.Projector && a.Commit == b.Commit && slices.Equal(a.Parts, b.Parts)
}

func TestPullSplitModel(t *testing.T) {
	h, files, commit := modelHub(t)
	dir := t.TempDir()
	got, err := pull(t, hub.Config{}, h.URL+"/org/model-GGUF:bf16", dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Parts) != 3 || got.Model != got.Parts[0] || got.Projector != "" {
		t.Fatalf("Pull = %+v, want 3 parts and no projector (none in BF16/)", got)
	}
	for i, p := range got.Parts {
		name := fmt.Sprintf("BF16/Model-BF16-%05d-of-00003.gguf", i+1)
		if p != filepath.Join(dir, "org", "model-GGUF", commit, filepath.FromSlash(name)) {
			t.Errorf("part %d at %s", i, p)
		}
		sameFile(t, p, files[name])
	}
	// Any part names the whole model.
	byPart, err := pull(t, hub.Config{}, h.URL+"/org/model-GGUF/BF16/Model-BF16-00002-of-00003.gguf", dir)
	if err != nil || !slices.Equal(byPart.Parts, got.Parts) {
		t.Fatalf("Pull by its second part = %+v, %v", byPart, err)
	}
}

func TestPullRefusesWhatItCannotPick(t *testing.T) {
	h := hubtest.New(t)
	h.Add("org/model-GGUF", repoFiles())
	h.Add("org/two", map[string][]byte{"a-Q8_0.gguf": blob(1, 10), "b-Q8_0.gguf": blob(2, 10), "c-Q6_K.gguf": blob(3, 10)})
	h.Add("org/evil", map[string][]byte{"../../evil-Q4_K_M.gguf": blob(1, 10)})
	dir := t.TempDir()
	for _, tc := range []struct{ ref, want string }{
		{"/org/model-GGUF:Q5_K_S", "no Q5_K_S model: one of: "},
		{"/org/two", "none is Q4_K_M"},
		{"/org/two:Q8_0", "2 models that match"},
		{"/org/evil:Q4_K_M", "no GGUF model file"},
		{"/org/model-GGUF/nope.gguf", "has no file nope.gguf"},
	} {
		_, err := pull(t, hub.Config{}, h.URL+tc.ref, dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Pull %s: %v, want an error that says %q", tc.ref, err, tc.want)
		}
	}
	if _, err := pull(t, hub.Config{}, h.URL+"/org/missing:Q4_K_M", dir); !errors.Is(err, hub.ErrNotFound) {
		t.Errorf("Pull of a missing repository: %v, want ErrNotFound", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "org")); len(entries) != 0 {
		t.Errorf("refused pulls left %d entries in the cache", len(entries))
	}
}

func TestPullResumesABrokenConnection(t *testing.T) {
	h, files, _ := modelHub(t)
	const name = "Model-Q4_K_M.gguf"
	half := int64(len(files[name]) / 2)
	h.SetFault(name, hubtest.Fault{BreakAt: half, Breaks: 1})
	got, err := pull(t, fastRetries, h.URL+"/org/model-GGUF:Q4_K_M", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sameFile(t, got.Model, files[name])
	if g, want := h.Gets(name), []string{"", fmt.Sprintf("bytes=%d-", half)}; !slices.Equal(g, want) {
		t.Errorf("storage GETs %q, want %q", g, want)
	}
}

func TestPullResumesInALaterPull(t *testing.T) {
	h, files, commit := modelHub(t)
	const name = "Model-Q4_K_M.gguf"
	half := int64(len(files[name]) / 2)
	dir := t.TempDir()
	// The connection breaks at half, every time: the Pull gives up.
	h.SetFault(name, hubtest.Fault{BreakAt: half, Breaks: -1})
	cfg := fastRetries
	cfg.Retries = 2
	if _, err := pull(t, cfg, h.URL+"/org/model-GGUF:Q4_K_M", dir); err == nil {
		t.Fatal("Pull through a connection that always breaks succeeded")
	}
	partial := filepath.Join(dir, "org", "model-GGUF", commit, name+".partial")
	if st, err := os.Stat(partial); err != nil || st.Size() != half {
		t.Fatalf("partial file after the failed Pull: %v, %v; want %d bytes", st, err, half)
	}
	// Mended, a later Pull asks only for the second half.
	h.SetFault(name, hubtest.Fault{})
	before := len(h.Gets(name))
	var first *hub.Progress
	cfg.Progress = func(p hub.Progress) {
		if first == nil {
			first = &p
		}
	}
	got, err := pull(t, cfg, h.URL+"/org/model-GGUF:Q4_K_M", dir)
	if err != nil {
		t.Fatal(err)
	}
	sameFile(t, got.Model, files[name])
	if g := h.Gets(name)[before:]; !slices.Equal(g, []string{fmt.Sprintf("bytes=%d-", half)}) {
		t.Errorf("storage GETs of the later Pull: %q, want one from byte %d", g, half)
	}
	if first == nil || first.Done < half {
		t.Errorf("first progress of the resumed Pull %+v, want Done from %d", first, half)
	}
	if _, err := os.Stat(partial); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("partial file left after the download: %v", err)
	}
}

func TestPullStartsAgainWhereRangeIsIgnored(t *testing.T) {
	h, files, _ := modelHub(t)
	const name = "Model-Q4_K_M.gguf"
	h.SetFault(name, hubtest.Fault{BreakAt: 1000, Breaks: 1, IgnoreRange: true})
	got, err := pull(t, fastRetries, h.URL+"/org/model-GGUF:Q4_K_M", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sameFile(t, got.Model, files[name])
}

func TestPullRefusesAWrongChecksum(t *testing.T) {
	h, _, commit := modelHub(t)
	const name = "Model-Q4_K_M.gguf"
	h.SetFault(name, hubtest.Fault{Corrupt: true})
	dir := t.TempDir()
	_, err := pull(t, hub.Config{}, h.URL+"/org/model-GGUF:Q4_K_M", dir)
	if !errors.Is(err, hub.ErrChecksum) {
		t.Fatalf("Pull of a corrupted file: %v, want ErrChecksum", err)
	}
	for _, p := range []string{name, name + ".partial"} {
		if _, err := os.Stat(filepath.Join(dir, "org", "model-GGUF", commit, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after a wrong checksum: %v, want none", p, err)
		}
	}
}

func TestPullOffline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	_, err = pull(t, hub.Config{}, "http://"+addr+"/org/model-GGUF:Q4_K_M", t.TempDir())
	if !errors.Is(err, hub.ErrOffline) {
		t.Fatalf("Pull with the hub down: %v, want ErrOffline", err)
	}
	if !strings.Contains(err.Error(), "http://"+addr) || !strings.Contains(err.Error(), "cannot be reached") {
		t.Errorf("error %q does not say which hub cannot be reached", err)
	}
}

func TestPullOfflineFromTheCache(t *testing.T) {
	h := hubtest.Start()
	files := repoFiles()
	h.Add("org/model-GGUF", files)
	dir := t.TempDir()
	online, err := pull(t, hub.Config{}, h.URL+"/org/model-GGUF:Q8_0", dir)
	if err != nil || online.Offline {
		t.Fatalf("Pull = %+v, %v", online, err)
	}
	base := h.URL
	h.Close() // the hub goes away
	var last hub.Progress
	cfg := hub.Config{Progress: func(p hub.Progress) { last = p }}
	got, err := pull(t, cfg, base+"/org/model-GGUF:q8_0", dir)
	if err != nil || !got.Offline || got.Model != online.Model || got.Projector != online.Projector {
		t.Fatalf("Pull offline = %+v, %v; want %+v from the cache", got, err, online)
	}
	if last.Done != last.Total || last.Total == 0 {
		t.Errorf("last progress %+v", last)
	}
	// Another quantization of the same revision was never pulled.
	if _, err := pull(t, hub.Config{}, base+"/org/model-GGUF:Q4_K_M", dir); !errors.Is(err, hub.ErrOffline) || !strings.Contains(err.Error(), "Model-Q4_K_M.gguf is not in") {
		t.Errorf("Pull offline of a model not in the cache: %v", err)
	}
}

func TestPullConcurrentGoroutines(t *testing.T) {
	h, files, _ := modelHub(t)
	const name = "Model-Q4_K_M.gguf"
	h.SetFault(name, hubtest.Fault{Delay: 2 * time.Millisecond}) // so that they overlap
	dir := t.TempDir()
	var wg sync.WaitGroup
	got := make([]hub.Pulled, 4)
	errs := make([]error, 4)
	for i := range got {
		wg.Go(func() { got[i], errs[i] = pull(t, hub.Config{}, h.URL+"/org/model-GGUF:Q4_K_M", dir) })
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i].Model != got[0].Model {
			t.Fatalf("Pull %d = %+v, %v", i, got[i], errs[i])
		}
	}
	sameFile(t, got[0].Model, files[name])
	if g := h.Gets(name); len(g) != 1 {
		t.Errorf("storage GETs %q, want one download for four Pulls", g)
	}
}

// TestPullConcurrentProcesses runs two processes, this test binary run
// again, that pull the same model into one directory at once.
func TestPullConcurrentProcesses(t *testing.T) {
	if ref := os.Getenv("HUB_TEST_PULL_REF"); ref != "" {
		// The child: pull, and print what was pulled.
		r, err := hub.ParseRef(ref)
		if err == nil {
			var p hub.Pulled
			p, err = hub.Pull(context.Background(), hub.Config{}, r, os.Getenv("HUB_TEST_PULL_DIR"))
			json.NewEncoder(os.Stdout).Encode(p)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	h, files, _ := modelHub(t)
	const name = "Model-Q4_K_M.gguf"
	h.SetFault(name, hubtest.Fault{Delay: 5 * time.Millisecond})
	dir := t.TempDir()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPullConcurrentProcesses$")
		cmd.Env = append(os.Environ(), "HUB_TEST_PULL_REF="+h.URL+"/org/model-GGUF:Q4_K_M", "HUB_TEST_PULL_DIR="+dir)
		out := new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	var models []string
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v: %s", i, err, outs[i])
		}
		var p hub.Pulled
		if err := json.NewDecoder(outs[i]).Decode(&p); err != nil {
			t.Fatalf("process %d: %v: %s", i, err, outs[i])
		}
		models = append(models, p.Model)
	}
	if models[0] != models[1] {
		t.Fatalf("the processes pulled %q", models)
	}
	sameFile(t, models[0], files[name])
	if g := h.Gets(name); len(g) != 1 {
		t.Errorf("storage GETs %q, want one download for two processes", g)
	}
	entries, err := os.ReadDir(filepath.Dir(models[0]))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".partial") {
			t.Errorf("%s left behind", e.Name())
		}
	}
}

// TestPullHostileHub: a hub that answers without end, with a commit that
// is not one, or with redirects in a loop or to another scheme is refused
// with an error, in bounded memory.
func TestPullHostileHub(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"endless answer", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"sha":"`))
			chunk := bytes.Repeat([]byte("a"), 1<<20)
			for range 40 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, "over 32 MiB"},
		{"commit", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"sha":"../../etc","siblings":[]}`)
		}, "want 40 hex digits"},
		{"redirect loop", func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/api/") {
				fmt.Fprintf(w, `{"sha":"%s","siblings":[{"rfilename":"m-Q8_0.gguf","lfs":{"sha256":"%s","size":10}}]}`, strings.Repeat("a", 40), sum)
				return
			}
			http.Redirect(w, r, r.URL.Path, http.StatusFound)
		}, "more than 10 redirects"},
		{"redirect scheme", func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/api/") {
				fmt.Fprintf(w, `{"sha":"%s","siblings":[{"rfilename":"m-Q8_0.gguf","lfs":{"sha256":"%s","size":10}}]}`, strings.Repeat("a", 40), sum)
				return
			}
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		}, `redirect to a "file" URL`},
		{"too long", func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/api/") {
				fmt.Fprintf(w, `{"sha":"%s","siblings":[{"rfilename":"m-Q8_0.gguf","lfs":{"sha256":"%s","size":10}}]}`, strings.Repeat("a", 40), sum)
				return
			}
			w.Header().Set("Content-Length", "1000000")
			w.Write(make([]byte, 1000000))
		}, "sends 1000000 bytes, want 10"},
		{"no checksum", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"sha":"%s","siblings":[{"rfilename":"m-Q8_0.gguf","size":10}]}`, strings.Repeat("a", 40))
		}, "publishes no SHA-256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			_, err := pull(t, fastRetries, srv.URL+"/org/m-GGUF:Q8_0", t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Pull: %v, want an error that says %q", err, tc.want)
			}
		})
	}
}
