//go:build cgo

package tinymodel

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/internal/llamacpp"
	"github.com/ollama/ollama/ml"
	"github.com/ollama/ollama/model"
	"github.com/ollama/ollama/model/input"
	_ "github.com/ollama/ollama/model/models"
	"github.com/ollama/ollama/tokenizer"
)

// TestNewArchRefusedByLlamaCpp documents why the engine needs a second
// backend: the pinned llama.cpp it links does not know the
// architectures of Qwen3.5 and Gemma 4, and says so while loading.
func TestNewArchRefusedByLlamaCpp(t *testing.T) {
	logs := &recorder{}
	prev := slog.Default()
	slog.SetDefault(slog.New(logs))
	t.Cleanup(func() { slog.SetDefault(prev) })
	for _, arch := range []string{"qwen35", "gemma4"} {
		t.Run(arch, func(t *testing.T) {
			logs.reset()
			m, err := llamacpp.LoadModel(Model(t, Options{Arch: arch}), llamacpp.ModelParams{})
			if err == nil {
				m.Close()
				t.Fatal("llama.cpp loaded the model")
			}
			want := "unknown model architecture: '" + arch + "'"
			if got := logs.text(); !strings.Contains(got, want) {
				t.Errorf("llama.cpp's log has no %q:\n%s", want, got)
			}
		})
	}
}

// recorder is a slog.Handler that keeps the messages of Warn and above.
type recorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Message)
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }
func (r *recorder) reset()                             { r.mu.Lock(); r.msgs = nil; r.mu.Unlock() }
func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.msgs, "\n")
}

// TestNewArchInGoEngine loads each file in Ollama's Go engine, as the
// engine's second backend will, and decodes greedily: its tokenizer reads
// the vocabulary, the logits are finite and depend on the prompt, and two
// sequences given the same prompt generate the same tokens.
func TestNewArchInGoEngine(t *testing.T) {
	const prompt = "Hello there, tiny model. What is 2+2?"
	// Qwen3.5-0.8B's widths, heads and context in 4 of its 24 layers
	// (3 linear-attention, 1 attention) and with the default vocabulary,
	// so that the real shape loads and runs in seconds; the full file is
	// for benchmarks (internal/testmodels.Qwen35Bench).
	qwen35Small := Qwen35_0_8B()
	qwen35Small.Layers, qwen35Small.VocabSize = 4, 0
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"qwen35", Options{Arch: "qwen35"}},
		{"gemma4", Options{Arch: "gemma4"}},
		{"qwen3.5-0.8b-4-layers", qwen35Small},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := model.New(Model(t, tc.opts), ml.BackendParams{AllocMemory: true, NumThreads: 2})
			if err != nil {
				t.Fatalf("model.New: %v", err)
			}
			cache := m.Config().Cache
			if cache == nil {
				t.Fatal("no cache")
			}
			cache.Init(m.Backend(), ml.DTypeF16, 2, 256, 64)
			t.Cleanup(func() {
				cache.Close()
				m.Backend().Close()
			})
			if err := m.Backend().Load(context.Background(), func(float32) {}); err != nil {
				t.Fatalf("Load: %v", err)
			}

			tok, ok := m.(tokenizer.Tokenizer)
			if !ok {
				t.Fatalf("%T is not a tokenizer", m)
			}
			ids, err := tok.Encode(prompt, false)
			if err != nil {
				t.Fatal(err)
			}
			if text, err := tok.Decode(ids); err != nil || text != prompt {
				t.Errorf("Decode(Encode(%q)) = %q, %v", prompt, text, err)
			}

			first, firstLogits := greedy(t, m, 0, ids, 12)
			second, _ := greedy(t, m, 1, ids, 12)
			t.Logf("greedy: %v", first)
			if !slices.Equal(first, second) {
				t.Errorf("the same prompt generated %v in sequence 0 and %v in sequence 1", first, second)
			}
			// Another prompt in a fresh sequence gives other logits.
			if err := cache.Remove(1, 0, math.MaxInt32); err != nil {
				t.Fatal(err)
			}
			_, otherLogits := greedy(t, m, 1, ids[1:], 1)
			if slices.Equal(firstLogits, otherLogits) {
				t.Error("the logits do not depend on the prompt")
			}
		})
	}
}

// greedy decodes n tokens after prompt in sequence seq, one forward pass
// per step, and returns them and the logits of the prompt's last token. It
// stops the test if a forward pass fails or a logit is not finite.
func greedy(t *testing.T, m model.Model, seq int, prompt []int32, n int) ([]int32, []float32) {
	t.Helper()
	var out []int32
	var first []float32
	toks, pos := prompt, int32(0)
	for range n {
		ctx := m.Backend().NewContext()
		b := input.Batch{Inputs: ctx.Input().FromInts(toks, len(toks)), Outputs: ctx.Input().FromInts([]int32{int32(len(toks) - 1)}, 1)}
		for i := range toks {
			b.Positions = append(b.Positions, pos+int32(i))
			b.Sequences = append(b.Sequences, seq)
		}
		ctx.SetBatchSize(len(toks))
		logits, err := model.Forward(ctx, m, b)
		if err != nil {
			ctx.Close()
			t.Fatalf("Forward: %v", err)
		}
		ctx.Compute(logits)
		l := logits.Floats()
		ctx.Close()
		best := 0
		for i, v := range l {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("logit %d of step %d is %v", i, len(out), v)
			}
			if v > l[best] {
				best = i
			}
		}
		if first == nil {
			first = l
		}
		out = append(out, int32(best))
		pos += int32(len(toks))
		toks = []int32{int32(best)}
	}
	return out, first
}
