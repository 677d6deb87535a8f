package runner

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/family"
)

// recurrentFake is a runner on a hybrid fake model, whose memory cannot be
// cut back, with checkpoints of budget bytes (0: none), one every `every`
// prompt tokens.
func recurrentFake(t *testing.T, seqs int, budget int64, every int) *fake {
	return newFake(t, fakeConfig{seqs: seqs, context: 4096, recurrent: true, ckptBytes: budget, ckptEvery: every, ckptState: 64})
}

// The same prompt twice on a recurrent model: the second time all but its
// last token comes from the checkpoint before it, and the output is a cold
// runner's. Without checkpoints nothing is reused.
func TestCheckpointSamePromptTwice(t *testing.T) {
	prompt := system + "What is a checkpoint?"
	want := recurrentFake(t, 1, 0, 0).generate(t, prompt, 16).Text
	for _, budget := range []int64{0, 1 << 20} {
		t.Run(fmt.Sprint("budget=", budget), func(t *testing.T) {
			f := recurrentFake(t, 2, budget, 0)
			f.generate(t, prompt, 16)
			before := f.Stats().Decoded
			res := f.generate(t, prompt, 16)
			wantCached := len(prompt) - 1
			if budget == 0 {
				wantCached = 0
			}
			if res.Usage.Cached != wantCached {
				t.Errorf("second time: %d of %d tokens cached, want %d", res.Usage.Cached, len(prompt), wantCached)
			}
			if got := f.Stats().Decoded - before; got != int64(len(prompt)-wantCached) {
				t.Errorf("second time: decoded %d prompt tokens, want %d", got, len(prompt)-wantCached)
			}
			if res.Text != want {
				t.Errorf("second time gave %q, a cold runner %q", res.Text, want)
			}
		})
	}
}

// A conversation on a recurrent model: each turn decodes only its new
// tokens, whether it keeps the last answer (which the end of the turn's
// checkpoint, or the sequence as it is, gives) or drops it as templates
// drop reasoning (the end of the last prompt's checkpoint); each turn's
// output is a cold runner's.
func TestCheckpointConversation(t *testing.T) {
	for _, keep := range []bool{true, false} {
		t.Run(fmt.Sprint("keepAnswer=", keep), func(t *testing.T) {
			f := recurrentFake(t, 2, 1<<20, 0)
			prompt := system
			for turn := range 4 {
				prompt += fmt.Sprintf("<user>question %d?</user>", turn)
				cold := recurrentFake(t, 1, 0, 0).generate(t, prompt, 12).Text
				before := f.Stats().Decoded
				res := f.generate(t, prompt, 12)
				if res.Text != cold {
					t.Errorf("turn %d gave %q, a cold runner %q", turn, res.Text, cold)
				}
				if turn > 0 {
					newTokens := len("<user>question 0?</user>")
					if got := f.Stats().Decoded - before; got != int64(newTokens) {
						t.Errorf("turn %d decoded %d prompt tokens (%d cached of %d), want its %d new ones", turn, got, res.Usage.Cached, len(prompt), newTokens)
					}
				}
				if keep {
					// The answer, less the last token sampled, which
					// the sequence does not hold.
					prompt += res.Text[:len(res.Text)-1]
				}
			}
		})
	}
}

// A prompt that shares part of a long prompt on a recurrent model resumes
// from the last checkpoint within the shared part, taken every `every`
// tokens: it decodes fewer than every tokens more than its new ones.
func TestCheckpointEveryTokens(t *testing.T) {
	const every = 64
	long := strings.Repeat("A long document that a few questions ask about. ", 12)
	first, second := long+"First question?", long[:len(long)-40]+"Second question?"
	want := recurrentFake(t, 1, 0, 0).generate(t, second, 8).Text
	f := recurrentFake(t, 1, 1<<20, every)
	f.generate(t, first, 8)
	before := f.Stats().Decoded
	res := f.generate(t, second, 8)
	shared := bytePrefixLen(first, second)
	wantCached := shared / every * every
	if res.Usage.Cached != wantCached {
		t.Errorf("%d tokens cached of a shared %d, want %d", res.Usage.Cached, shared, wantCached)
	}
	if got := f.Stats().Decoded - before; got != int64(len(second)-wantCached) || got-int64(len(second)-shared) >= every {
		t.Errorf("decoded %d prompt tokens, want %d", got, len(second)-wantCached)
	}
	if res.Text != want {
		t.Errorf("gave %q, a cold runner %q", res.Text, want)
	}
}

// The checkpoints never take more than their budget, however many
// prompts come; within it, the most recent ones still serve.
func TestCheckpointBudget(t *testing.T) {
	const state = 64
	// A checkpoint takes its state and 4 bytes per token it keeps.
	prompt := func(i int) string { return fmt.Sprintf("%s question %02d?", system[:100], i) }
	size := int64(state + 4*len(prompt(0)))
	budget := 5 * size
	f := recurrentFake(t, 1, budget, 0)
	for i := range 12 {
		f.generate(t, prompt(i), 4)
		if got := f.ckpt.bytes(); got > budget {
			t.Fatalf("after %d prompts the checkpoints take %d bytes, more than the budget %d", i+1, got, budget)
		}
	}
	if res := f.generate(t, prompt(11), 4); res.Usage.Cached != len(prompt(11))-1 {
		t.Errorf("the last prompt again: %d cached, want %d", res.Usage.Cached, len(prompt(11))-1)
	}
}

// A prompt that opens a thinking section, as Qwen3.5's generation prompt
// does, is checkpointed where the section starts: the next turn, whose
// template renders this one without it, decodes only its own tokens.
func TestCheckpointAtThinking(t *testing.T) {
	fam := *family.Lookup("", "") // ChatML's, which thinks here
	fam.Thinking = &family.Thinking{Open: "<think>", Close: "</think>"}
	thinking := func(f *fake, prompt string) *Result {
		w := f.work(t, prompt, 8, greedy)
		w.Family, w.Thinking = &fam, true
		res, err := f.run(context.Background(), w)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	turn1 := system + "<user>First?</user><assistant>"
	turn2 := turn1 + "An answer.</assistant><user>Second?</user><assistant>"
	f := recurrentFake(t, 1, 1<<20, 0)
	thinking(f, turn1+"<think>\n")
	before := f.Stats().Decoded
	res := thinking(f, turn2+"<think>\n")
	if got, want := f.Stats().Decoded-before, int64(len(turn2)-len(turn1)+len("<think>\n")); got != want {
		t.Errorf("the second turn decoded %d prompt tokens, want its %d new ones", got, want)
	}
	if want := thinking(recurrentFake(t, 1, 0, 0), turn2+"<think>\n"); res.Reasoning != want.Reasoning || res.Text != want.Text {
		t.Errorf("the second turn gave %q %q, a cold runner %q %q", res.Reasoning, res.Text, want.Reasoning, want.Text)
	}
}

// On disk too, a recurrent model's prefixes are kept at its checkpoints'
// positions: after a restart, a prompt that shares part of a long one
// resumes from a multiple of CheckpointEvery within what it shares, with
// a cold runner's output.
func TestCheckpointsOnDisk(t *testing.T) {
	const every = 64
	path := filepath.Join(t.TempDir(), "fake.gguf")
	if err := os.WriteFile(path, []byte("a fake model"), 0o644); err != nil {
		t.Fatal(err)
	}
	key, err := PrefixKey(path, "f16/f16")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	open := func() *fake {
		store, err := OpenPrefixStore(dir, 1<<30, slog.New(slog.DiscardHandler), time.Now)
		if err != nil {
			t.Fatal(err)
		}
		return newFake(t, fakeConfig{seqs: 1, context: 4096, recurrent: true, ckptBytes: 1 << 20, ckptEvery: every,
			disk: store, key: key, saveMin: 16, saveLong: 1 << 30})
	}
	long := strings.Repeat("A long document that a few questions ask about. ", 12)
	first, second := long+"First question?", long[:len(long)-40]+"Second question?"
	want := recurrentFake(t, 1, 0, 0).generate(t, second, 8).Text
	f := open()
	f.generate(t, first, 8)
	f.Stop() // waits for the saves
	f = open()
	res := f.generate(t, second, 8)
	if res.Usage.Cached == 0 || res.Usage.Cached%every != 0 || res.Usage.Cached > bytePrefixLen(first, second) {
		t.Errorf("after a restart %d tokens cached, want a multiple of %d within the %d shared", res.Usage.Cached, every, bytePrefixLen(first, second))
	}
	if res.Text != want {
		t.Errorf("after a restart %q, a cold runner %q", res.Text, want)
	}
}
