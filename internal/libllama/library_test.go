package libllama_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/libllama"
	"github.com/inferkit/inferkit/internal/tinymodel"
)

// npmLibrary is where scripts/fetch-testdata.sh puts llama.cpp v0.4.0,
// from node-llama-cpp's platform package.
const npmLibrary = "../../.build/testdata/npm/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v0.4.0.so"

// library opens the library INFERKIT_LIBLLAMA names, or the npm one, or
// skips the test when neither is there.
func library(t testing.TB) *libllama.Library {
	t.Helper()
	path := os.Getenv("INFERKIT_LIBLLAMA")
	if path == "" {
		path = npmLibrary
	}
	if _, err := os.Stat(path); err != nil {
		t.Skipf("skipping: no llama.cpp library at %s (scripts/fetch-testdata.sh fetches one; INFERKIT_LIBLLAMA names another)", path)
	}
	lib, err := libllama.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func load(t testing.TB, opts tinymodel.Options) *libllama.Model {
	t.Helper()
	lib := library(t)
	m, err := lib.LoadModel(tinymodel.Model(t, opts), libllama.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func newContext(t testing.TB, m *libllama.Model, p backend.ContextParams) backend.Context {
	t.Helper()
	if p.Threads == 0 {
		p.Threads = 2
	}
	ctx, err := m.NewContext(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctx.Close)
	return ctx
}

// decodeAt decodes toks at positions from pos on seq, and returns a copy
// of the logits of the last.
func decodeAt(t testing.TB, ctx backend.Context, toks []backend.Token, pos, seq int) []float32 {
	t.Helper()
	b := ctx.NewBatch(len(toks))
	defer b.Close()
	for i, tok := range toks {
		if _, err := b.Add(tok, pos+i, []int{seq}, i == len(toks)-1); err != nil {
			t.Fatal(err)
		}
	}
	if err := ctx.Decode(b); err != nil {
		t.Fatal(err)
	}
	return slices.Clone(ctx.Logits(len(toks) - 1))
}

// The library is the release the package binds, and it loads a model
// and reads its vocabulary and metadata.
func TestOpenLoadsTheRelease(t *testing.T) {
	lib := library(t)
	if v := lib.Version(); !strings.HasPrefix(v, libllama.APIVersion) {
		t.Fatalf("version %q, want %s", v, libllama.APIVersion)
	}
	again, err := libllama.Open(lib.Path())
	if err != nil || again != lib {
		t.Fatalf("second Open: %p, %v; want the same library %p", again, err, lib)
	}
	m := load(t, tinymodel.Options{})
	if m.Backend() != backend.LibLlama {
		t.Fatalf("backend %q", m.Backend())
	}
	if arch, ok := m.Meta("general.architecture"); !ok || arch != "llama" {
		t.Fatalf("architecture %q, %v", arch, ok)
	}
	if m.VocabSize() <= 256 || m.EmbeddingSize() != 64 || m.ChatTemplate() == "" {
		t.Fatalf("vocabulary %d, embedding %d, template %q", m.VocabSize(), m.EmbeddingSize(), m.ChatTemplate())
	}
}

// A path that names nothing is refused as such, before dlopen.
func TestOpenMissing(t *testing.T) {
	_, err := libllama.Open(filepath.Join(t.TempDir(), "libllama.so"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open of a missing file: %v, want fs.ErrNotExist", err)
	}
}

// fakeLibrary compiles a shared library of C source src, or skips.
func fakeLibrary(t *testing.T, src string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("skipping: no C compiler to build a fake library")
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "fake.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "libllama.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, c).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return so
}

// A library of another release, or one that is no llama.cpp of this
// API, is refused with an error that names both versions, and nothing of
// it is called past its version.
func TestOpenRefusesOtherAPIs(t *testing.T) {
	for _, c := range []struct {
		name, src, found, want string
	}{
		{"older release", `const char *llama_version(void) { return "0.3.2"; }
			void *llama_model_default_params(void) { __builtin_trap(); }`, "0.3.2", "is llama.cpp 0.3.2; inferkit binds the API of llama.cpp " + libllama.APIVersion},
		{"no version", `int llama_decode(void) { return 0; }`, "", "has no llama_version"},
		{"a missing function", `const char *llama_version(void) { return "` + libllama.APIVersion + `"; }`, libllama.APIVersion, "lacks llama_backend_init"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := libllama.Open(fakeLibrary(t, c.src))
			var ve *libllama.VersionError
			if !errors.As(err, &ve) {
				t.Fatalf("Open: %v, want a *VersionError", err)
			}
			if ve.Found != c.found || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), libllama.APIVersion) {
				t.Fatalf("Open: %v (found %q), want one naming %q and %s", err, ve.Found, c.want, libllama.APIVersion)
			}
		})
	}
}

// Greedy decoding runs, and the same prompt gives the same logits in two
// sequences of one batch.
func TestGenerateAndBatch(t *testing.T) {
	m := load(t, tinymodel.Options{Embd: 128, Heads: 2})
	prompt, err := m.Tokenize("Once upon a time", true)
	if err != nil || len(prompt) == 0 {
		t.Fatalf("tokens %v, %v", prompt, err)
	}
	ctx := newContext(t, m, backend.ContextParams{Context: 256, Sequences: 2})
	alone := decodeAt(t, ctx, prompt, 0, 0)
	ctx.Clear()

	b := ctx.NewBatch(2 * len(prompt))
	defer b.Close()
	var last [2]int
	for s := range 2 {
		for i, tok := range prompt {
			if last[s], err = b.Add(tok, i, []int{s}, i == len(prompt)-1); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := ctx.Decode(b); err != nil {
		t.Fatal(err)
	}
	for s := range 2 {
		if d := maxDiff(alone, ctx.Logits(last[s])); d > 1e-3 {
			t.Fatalf("sequence %d in a batch of two: logits differ by %g from the prompt alone", s, d)
		}
	}
	smp, err := m.NewSampler(backend.SamplerParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer smp.Close()
	if tok := smp.Sample(ctx, last[1], nil); tok != backend.Token(argmax(alone)) {
		t.Fatalf("greedy sample %d, argmax %d", tok, argmax(alone))
	}
	if ctx.Logits(0) != nil || smp.Sample(ctx, 0, nil) != -1 {
		t.Fatal("an index that asked for no logits gave some")
	}
}

func argmax(xs []float32) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}

func maxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return 1e9
	}
	var d float64
	for i := range a {
		d = max(d, float64(abs(a[i]-b[i])))
	}
	return d
}

func abs(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}
