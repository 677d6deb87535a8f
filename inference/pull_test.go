package inference_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/hub/hubtest"
)

func TestPull(t *testing.T) {
	h := hubtest.New(t)
	model, projector := []byte("GGUF model bytes"), []byte("GGUF projector bytes")
	commit := h.Add("org/m-GGUF", map[string][]byte{"m-Q4_K_M.gguf": model, "mmproj-m-F16.gguf": projector, "m-Q8_0.gguf": []byte("other")})
	dir := t.TempDir()
	var reports int
	got, err := inference.Pull(context.Background(), h.URL+"/org/m-GGUF:Q4_K_M", dir, func(p inference.PullProgress) { reports++ })
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "org", "m-GGUF", commit, "m-Q4_K_M.gguf"); got.Path != want || got.Commit != commit || len(got.Parts) != 1 {
		t.Fatalf("Pull = %+v, want the model at %s", got, want)
	}
	if b, _ := os.ReadFile(got.Projector); string(b) != string(projector) {
		t.Errorf("projector %s holds %q", got.Projector, b)
	}
	if reports == 0 {
		t.Error("no progress reported")
	}

	h.SetFault("m-Q8_0.gguf", hubtest.Fault{Corrupt: true})
	if _, err := inference.Pull(context.Background(), h.URL+"/org/m-GGUF:Q8_0", dir, nil); !errors.Is(err, inference.ErrChecksum) {
		t.Errorf("Pull of a corrupted file: %v, want ErrChecksum", err)
	}
	if _, err := inference.Pull(context.Background(), h.URL+"/org/none:Q8_0", dir, nil); !errors.Is(err, inference.ErrHubNotFound) {
		t.Errorf("Pull of a missing repository: %v, want ErrHubNotFound", err)
	}
	if _, err := inference.Pull(context.Background(), "hf.co/org", dir, nil); err == nil || !strings.HasPrefix(err.Error(), "inference: pull: hub: reference") {
		t.Errorf("Pull of a bad reference: %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	down := "http://" + ln.Addr().String() + "/org/m-GGUF:Q4_K_M"
	if _, err := inference.Pull(context.Background(), down, t.TempDir(), nil); !errors.Is(err, inference.ErrHubOffline) {
		t.Errorf("Pull with the hub down: %v, want ErrHubOffline", err)
	}
	// Into the directory it was pulled into before, the model is found.
	if cached, err := inference.Pull(context.Background(), down, dir, nil); err != nil || !cached.Offline || cached.Path != got.Path {
		t.Errorf("Pull with the hub down into the cache = %+v, %v; want %s, Offline", cached, err, got.Path)
	}
}
