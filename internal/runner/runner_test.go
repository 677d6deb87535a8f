package runner

// These tests run the runner against the pure-Go fake backend
// (internal/backend/fakebackend), so they run without cgo, in
// milliseconds: scheduling, prefix reuse in memory and on disk, scoring
// branches and cancellation. They mirror the meaning of the cgo tests of
// package inference (engine_test.go, prefix_test.go, score_test.go and
// runner_test.go), which run the same machinery on real models through
// the engine.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/backend/fakebackend"
)

// fakeConfig is a runner's shape as the engine makes it from its Config
// (the zero value of each field takes the engine's default).
type fakeConfig struct {
	seqs, batch, branches, branchCells, context, queue int
	disk                                               *PrefixStore
	key                                                string
	saveMin, saveLong                                  int
	// recurrent makes the model a hybrid one (fakebackend.Options), whose
	// checkpoints take ckptBytes in all, one each ckptEvery prompt tokens.
	recurrent            bool
	ckptBytes            int64
	ckptEvery, ckptState int
	// rollsBack makes the recurrent state roll back over drafts
	// (fakebackend.Options.RollsBack, DefaultMaxDraft snapshots).
	rollsBack bool
	drafter   Drafter
}

// fake is a runner on a fake model: one token per byte of a prompt, no
// BOS.
type fake struct {
	*Runner
	llm *fakebackend.Model
}

func newFake(t *testing.T, c fakeConfig) *fake {
	t.Helper()
	if c.seqs == 0 {
		c.seqs = 4
	}
	if c.batch == 0 {
		c.batch = 512
	}
	if c.branches == 0 {
		c.branches = min(32, 256-c.seqs)
	}
	if c.branchCells == 0 {
		c.branchCells = c.batch
	}
	if c.context == 0 {
		c.context = 1024
	}
	if c.queue == 0 {
		c.queue = 64
	}
	if c.saveMin == 0 {
		c.saveMin, c.saveLong = 1<<30, 1<<30
	}
	llm := fakebackend.New(fakebackend.Options{Recurrent: c.recurrent, CheckpointBytes: c.ckptState, RollsBack: c.rollsBack})
	cells := c.seqs * c.context
	p := backend.ContextParams{Context: cells + c.branchCells, Batch: c.batch, Sequences: c.seqs + c.branches, Threads: 1}
	if c.rollsBack {
		p.Rollback = DefaultMaxDraft
	}
	ctx, err := llm.NewContext(p)
	if err != nil {
		t.Fatal(err)
	}
	r := New(llm, ctx, Config{
		Sequences: c.seqs, Branches: c.branches, BranchCells: c.branchCells,
		Context: c.context, Cells: cells, Queue: c.queue,
		TTL: 5 * time.Minute, Now: time.Now, Logger: slog.New(slog.DiscardHandler),
		Disk: c.disk, DiskKey: c.key, SaveMin: c.saveMin, SaveLong: c.saveLong,
		CheckpointBytes: c.ckptBytes, CheckpointEvery: c.ckptEvery,
		Drafter: c.drafter,
	})
	t.Cleanup(r.Stop)
	return &fake{Runner: r, llm: llm}
}

// greedy is the engine's sampling at temperature 0.
var greedy = backend.SamplerParams{Temperature: 0, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatLastN: 64}

// work is a prompt's work with a sampler of sp; maxTokens 0 is what the
// context leaves.
func (f *fake) work(t *testing.T, prompt string, maxTokens int, sp backend.SamplerParams) *Work {
	t.Helper()
	toks, err := f.llm.Tokenize(prompt, false)
	if err != nil {
		t.Fatal(err)
	}
	if maxTokens == 0 {
		maxTokens = f.perSeq - len(toks)
	}
	s, err := f.llm.NewSampler(sp)
	if err != nil {
		t.Fatal(err)
	}
	return &Work{Prompt: toks, MaxTokens: maxTokens, Sampler: s, Budget: -1}
}

// submit gives w a job of ctx and queues it.
func (f *fake) submit(ctx context.Context, w *Work) error {
	w.Job = NewJobs(ctx, 1, nil)[0]
	if err := f.Submit(w); err != nil {
		w.Close()
		return err
	}
	return nil
}

// run runs w to its end.
func (f *fake) run(ctx context.Context, w *Work) (*Result, error) {
	if err := f.submit(ctx, w); err != nil {
		return nil, err
	}
	var res *Result
	var err error
	Stream(ctx, []*Job{w.Job}, func(_ int, ev Event, e error) bool {
		if e != nil {
			err = e
			return false
		}
		if ev.Final != nil {
			res = ev.Final
		}
		return true
	})
	if err == nil && res == nil {
		err = errors.New("the stream ended without a result")
	}
	return res, err
}

func (f *fake) generate(t *testing.T, prompt string, maxTokens int) *Result {
	t.Helper()
	res, err := f.run(context.Background(), f.work(t, prompt, maxTokens, greedy))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// texts runs the prompts at once, and returns their outputs.
func (f *fake) texts(t *testing.T, ps []string, maxTokens int, sp backend.SamplerParams) []string {
	t.Helper()
	got := make([]string, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		w := f.work(t, p, maxTokens, sp)
		wg.Go(func() {
			res, err := f.run(context.Background(), w)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = res.Text
		})
	}
	wg.Wait()
	return got
}

// wait polls cond for up to 10 seconds.
func wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

var prompts = []string{"Once upon a time", "The little dog", "Lily and Ben went to the", "One day, a big"}

// Batching never mixes sequences: a request's greedy output is the same
// alone and beside three others, in large batches and in small ones
// that prefill prompts in chunks.
func TestGreedySameAloneAndConcurrent(t *testing.T) {
	solo := newFake(t, fakeConfig{seqs: 1})
	want := make([]*Result, len(prompts))
	for i, p := range prompts {
		want[i] = solo.generate(t, p, 48)
		if want[i].Usage.Completion == 0 {
			t.Fatalf("prompt %q: no output", p)
		}
	}
	if again := solo.generate(t, prompts[0], 48); again.Text != want[0].Text {
		t.Fatalf("greedy output changed between runs: %q, then %q", want[0].Text, again.Text)
	}
	for _, batch := range []int{512, 16} {
		f := newFake(t, fakeConfig{seqs: 4, batch: batch})
		for round := range 3 {
			got := f.texts(t, prompts, 48, greedy)
			for i := range prompts {
				if got[i] != want[i].Text {
					t.Errorf("batch %d, round %d, prompt %q:\nconcurrent %q\nalone      %q", batch, round, prompts[i], got[i], want[i].Text)
				}
			}
		}
	}
}

// Seeded sampling gives the same output for the same seed, alone or
// beside other requests.
func TestSeededSameAloneAndConcurrent(t *testing.T) {
	seeded := greedy
	seeded.Temperature, seeded.Seed = 1, 7
	solo := newFake(t, fakeConfig{seqs: 1})
	want := make([]string, len(prompts))
	for i, p := range prompts {
		res, err := solo.run(context.Background(), solo.work(t, p, 32, seeded))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = res.Text
	}
	got := newFake(t, fakeConfig{seqs: 4}).texts(t, prompts, 32, seeded)
	for i := range prompts {
		if got[i] != want[i] {
			t.Errorf("prompt %q: concurrent %q, alone %q", prompts[i], got[i], want[i])
		}
	}
}

// noEOS samples greedily and never ends the turn: it runs to the end of
// the context.
func (f *fake) noEOS() backend.SamplerParams {
	sp := greedy
	sp.Ban = f.llm.EOGTokens()
	return sp
}

// With the one sequence busy and the queue full, Submit fails at once
// with ErrQueueFull; the queued work ends with its context. Once stopped,
// the runner takes no more work.
func TestQueueFull(t *testing.T) {
	f := newFake(t, fakeConfig{seqs: 1, queue: 1, context: 16384})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	long := f.work(t, "x", 0, f.noEOS())
	if err := f.submit(ctx, long); err != nil {
		t.Fatal(err)
	}
	busy := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		Stream(ctx, []*Job{long.Job}, func(int, Event, error) bool {
			select {
			case busy <- struct{}{}:
			default:
			}
			return true
		})
	})
	<-busy
	queued := f.work(t, "y", 5, greedy)
	if err := f.submit(ctx, queued); err != nil {
		t.Fatalf("the first to wait: %v", err)
	}
	if err := f.submit(ctx, f.work(t, "z", 5, greedy)); !errors.Is(err, ErrQueueFull) {
		t.Errorf("the second to wait: %v, want ErrQueueFull", err)
	}
	cancel()
	if err := queued.Job.Wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("queued work after cancel: %v, want context.Canceled", err)
	}
	wg.Wait()
	f.Stop()
	if err := f.submit(context.Background(), f.work(t, "y", 5, greedy)); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Stop: %v, want ErrClosed", err)
	}
}

// Stop ends the work at work and in the queue with ErrClosed.
func TestStopEndsWork(t *testing.T) {
	f := newFake(t, fakeConfig{seqs: 1, context: 16384})
	ctx := context.Background()
	running, queued := f.work(t, "x", 0, f.noEOS()), f.work(t, "y", 0, f.noEOS())
	for _, w := range []*Work{running, queued} {
		if err := f.submit(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	wait(t, "the first work to start", func() bool { return f.Stats().Active == 1 })
	f.Stop()
	for _, w := range []*Work{running, queued} {
		if err := w.Job.Wait(); !errors.Is(err, ErrClosed) {
			t.Errorf("work after Stop: %v, want ErrClosed", err)
		}
	}
}

// Parallel work decodes at once; a reader's break frees each sequence
// within one decode step, and new work takes them at once.
func TestParallelAndBreakFreesSlot(t *testing.T) {
	f := newFake(t, fakeConfig{seqs: 4, queue: 4, context: 4096})
	started := make(chan struct{})
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		w := f.work(t, "Once upon a time", 0, f.noEOS()) // to the end of the context
		wg.Go(func() {
			if err := f.submit(context.Background(), w); err != nil {
				t.Error(err)
			}
			Stream(context.Background(), []*Job{w.Job}, func(_ int, _ Event, err error) bool {
				if err != nil {
					t.Error(err)
				}
				started <- struct{}{} // even after an error, so that the test ends
				<-release
				return false
			})
		})
	}
	for range 4 {
		<-started
	}
	if got := f.Stats().Active; got != 4 {
		t.Errorf("%d active sequences, want 4", got)
	}
	close(release)
	wg.Wait()
	before := f.Stats().Steps
	wait(t, "the broken-off sequences to be freed", func() bool { return f.Stats().Active == 0 })
	if steps := f.Stats().Steps - before; steps > 1 {
		t.Errorf("sequences freed after %d decode steps, want at most 1", steps)
	}
	var done sync.WaitGroup
	for _, p := range prompts {
		w := f.work(t, p, 5, greedy)
		done.Go(func() {
			if res, err := f.run(context.Background(), w); err != nil || res.Usage.Completion == 0 {
				t.Errorf("after the break: %+v, %v", res, err)
			}
		})
	}
	done.Wait()
}

// A cancelled context ends a stream with context.Canceled, and frees its
// sequence for the next work.
func TestCancelledContext(t *testing.T) {
	f := newFake(t, fakeConfig{seqs: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := f.work(t, "Once upon a time", 0, f.noEOS())
	if err := f.submit(ctx, w); err != nil {
		t.Fatal(err)
	}
	n := 0
	var last error
	Stream(ctx, []*Job{w.Job}, func(_ int, ev Event, err error) bool {
		if err != nil {
			last = err
			return false
		}
		if ev.Text != "" {
			n++
		}
		if n == 3 {
			cancel()
		}
		return true
	})
	if !errors.Is(last, context.Canceled) {
		t.Errorf("stream ended with %v, want context.Canceled", last)
	}
	wait(t, "the cancelled sequence to be freed", func() bool { return f.Stats().Active == 0 })
	f.generate(t, "Once", 3)
}

var system = strings.Repeat("You are a careful assistant who answers briefly. ", 8)

// A prompt that continues a cached one decodes only what is new, reports
// the rest as cached, and gives what a cold runner gives.
func TestPrefixReuse(t *testing.T) {
	first, second := system+"Question one?", system+"Another question?"
	want := newFake(t, fakeConfig{seqs: 1}).generate(t, second, 8).Text

	f := newFake(t, fakeConfig{seqs: 2})
	if got := f.generate(t, first, 8).Usage.Cached; got != 0 {
		t.Errorf("first work: %d cached tokens, want 0", got)
	}
	before := f.Stats().Decoded
	res := f.generate(t, second, 8)
	shared := bytePrefixLen(first, second)
	if res.Usage.Cached != shared || res.Usage.Prompt != len(second) {
		t.Errorf("second work: usage %+v, want %d cached of %d", res.Usage, shared, len(second))
	}
	if got := f.Stats().Decoded - before; got != int64(len(second)-shared) {
		t.Errorf("decoded %d prompt tokens, want %d", got, len(second)-shared)
	}
	if res.Text != want {
		t.Errorf("continued prompt gave %q, a cold runner %q", res.Text, want)
	}
	// The same prompt again: all but its last token is cached.
	again := f.generate(t, second, 8)
	if again.Usage.Cached != len(second)-1 || again.Text != want {
		t.Errorf("repeated prompt: %d cached, %q; want %d, %q", again.Usage.Cached, again.Text, len(second)-1, want)
	}
}

// Two conversations that share only their first tokens (a chat
// template's header), taking turns on a runner of two sequences: each
// takes a sequence of its own, copying the header instead of throwing
// the other's cache away, so that each turn finds its whole conversation
// cached.
func TestPrefixKeptAcrossConversations(t *testing.T) {
	header := "<|im_start|>system\n"
	a := header + "You are assistant A. Answer briefly and kindly, every time."
	b := header + "You are assistant B, who likes long answers about the sea."
	f := newFake(t, fakeConfig{seqs: 2})
	f.generate(t, a, 4)
	if got := f.generate(t, b, 4).Usage.Cached; got != len(header)+len("You are assistant ") {
		t.Errorf("b after a: %d cached, want the shared %d", got, len(header)+len("You are assistant "))
	}
	for round := range 3 {
		for _, p := range []string{a, b} {
			if got := f.generate(t, p, 4).Usage.Cached; got != len(p)-1 {
				t.Errorf("round %d, %.24q: %d of %d prompt tokens cached, want all but the last", round, p, got, len(p))
			}
		}
	}
}

// Concurrent work that shares a system prompt decodes it once, and gives
// what each gives alone.
func TestPrefixSharedByConcurrentWork(t *testing.T) {
	ps := []string{system + "Alpha?", system + "Beta?", system + "Gamma?", system + "Delta?"}
	solo := newFake(t, fakeConfig{seqs: 1})
	want := make([]string, len(ps))
	for i, p := range ps {
		want[i] = solo.generate(t, p, 6).Text
	}
	for _, batch := range []int{512, 32} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			f := newFake(t, fakeConfig{seqs: 4, batch: batch})
			results := make([]*Result, len(ps))
			var wg sync.WaitGroup
			for i, p := range ps {
				w := f.work(t, p, 6, greedy)
				wg.Go(func() {
					res, err := f.run(context.Background(), w)
					if err != nil {
						t.Error(err)
						res = &Result{}
					}
					results[i] = res
				})
			}
			wg.Wait()
			cached := make([]int, len(results))
			var total int
			for i, res := range results {
				cached[i] = res.Usage.Cached
				total += len(ps[i])
				if res.Text != want[i] {
					t.Errorf("prompt %d: %q beside others, %q alone", i, res.Text, want[i])
				}
			}
			slices.Sort(cached)
			shared := len(system)
			if want := []int{0, shared, shared, shared}; !slices.Equal(cached, want) {
				t.Errorf("cached tokens %v, want %v", cached, want)
			}
			if got, want := f.Stats().Decoded, int64(total-3*shared); got != want {
				t.Errorf("decoded %d prompt tokens, want %d (%d without the cache)", got, want, total)
			}
		})
	}
}

// A prefix saved on disk by one runner is restored by the next, which
// then decodes only the rest and gives the cold output.
func TestPrefixOnDisk(t *testing.T) {
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
		return newFake(t, fakeConfig{seqs: 1, disk: store, key: key, saveMin: 16, saveLong: 64})
	}
	prompt := system + "What is on disk?"
	first := open()
	want := first.generate(t, prompt, 8)
	if want.Usage.Cached != 0 {
		t.Fatalf("first runner: %d cached, want 0", want.Usage.Cached)
	}
	first.Stop() // saves the prefixes
	second := open()
	res := second.generate(t, prompt, 8)
	if res.Usage.Cached == 0 || int64(res.Usage.Prompt-res.Usage.Cached) != second.Stats().Decoded {
		t.Errorf("second runner: usage %+v, decoded %d: want the prefix restored from disk", res.Usage, second.Stats().Decoded)
	}
	if res.Text != want.Text {
		t.Errorf("restored prefix gave %q, the cold runner %q", res.Text, want.Text)
	}
}

func bytePrefixLen(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

var questions = []string{"Is it sunny? ", "Which colour is the sky? Answer with one letter: ", "Rate it from 1 to 5: ", "Yes or no? ", "Pick A, B or C: "}

// branch is a branch's text and candidates, as Score takes them.
type branch struct {
	text  string
	cands [][]int
}

// score scores branches after prefix, after checking that each fits.
func (f *fake) score(t *testing.T, prefix string, branches ...branch) ScoreResult {
	t.Helper()
	res, err := f.scoreErr(prefix, branches...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// scoreErr is score for any goroutine: it fails with an error.
func (f *fake) scoreErr(prefix string, branches ...branch) (ScoreResult, error) {
	p, err := f.llm.Tokenize(prefix, false)
	if err != nil {
		return ScoreResult{}, err
	}
	return f.scoreTokens(p, branches...)
}

// scoreTokens is scoreErr after the prefix's tokens p.
func (f *fake) scoreTokens(p []backend.Token, branches ...branch) (ScoreResult, error) {
	sw := &Score{}
	for _, b := range branches {
		toks, err := f.llm.Tokenize(b.text, false)
		if err != nil {
			return ScoreResult{}, err
		}
		cands := make([][]backend.Token, len(b.cands))
		for i, c := range b.cands {
			for _, tok := range c {
				cands[i] = append(cands[i], backend.Token(tok))
			}
		}
		tree := NewCandidateTree(cands)
		if err := f.Fits(len(p), toks, tree); err != nil {
			return ScoreResult{}, err
		}
		sw.Branches, sw.Trees = append(sw.Branches, toks), append(sw.Trees, tree)
	}
	w := &Work{Prompt: p, Score: sw}
	if err := f.submit(context.Background(), w); err != nil {
		return ScoreResult{}, err
	}
	if err := w.Job.Wait(); err != nil {
		return ScoreResult{}, err
	}
	if len(sw.Result.Branches) != len(branches) {
		return ScoreResult{}, fmt.Errorf("%d branch scores for %d branches", len(sw.Result.Branches), len(branches))
	}
	return sw.Result, nil
}

// Over the whole vocabulary a branch's probabilities sum to 1, and the
// most likely token is the one greedy generation picks after the same
// text.
func TestScoreProbabilities(t *testing.T) {
	f := newFake(t, fakeConfig{seqs: 1})
	all := make([][]int, f.llm.VocabSize())
	for i := range all {
		all[i] = []int{i}
	}
	for _, q := range questions {
		res := f.score(t, system, branch{q, all}).Branches[0]
		var sum float64
		best := 0
		for i, p := range res.Probabilities {
			if p < 0 || p > 1 || math.IsNaN(p) {
				t.Fatalf("probability %v of token %d", p, i)
			}
			sum += p
			if p > res.Probabilities[best] {
				best = i
			}
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("%q: probabilities sum to %v", q, sum)
		}
		f.generate(t, system+q, 2)
		if got := f.Cache(0)[len(system+q)]; int(got) != best {
			t.Errorf("%q: most likely token %d, greedy generation starts with %d", q, best, got)
		}
	}
}

// A branch gives the same numbers alone and among others, in one group
// or several (few branch sequences, little branch room, small batches),
// for single tokens and for candidates of several tokens, which branch
// into trees.
func TestScoreBranchesIndependent(t *testing.T) {
	singles := [][]int{{'A'}, {'B'}, {'C'}, {'y'}, {'n'}, {'1'}, {'5'}}
	words := [][]int{{'y', 'e', 's'}, {'y', 'e', 'a', 'h'}, {'n', 'o'}, {'A'}}
	for _, c := range []struct {
		name  string
		cands [][]int
		cfgs  []fakeConfig
	}{
		{"singles", singles, []fakeConfig{{seqs: 2}, {seqs: 1, branches: 2}, {seqs: 2, branchCells: 60}, {seqs: 2, batch: 16, branchCells: 64}}},
		{"words", words, []fakeConfig{{seqs: 2}, {seqs: 1, branches: 4}, {seqs: 2, branchCells: 80}, {seqs: 2, batch: 16, branchCells: 96}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, fakeConfig{seqs: 2})
			var branches []branch
			var alone []BranchScore
			for _, q := range questions {
				b := branch{q, c.cands}
				branches = append(branches, b)
				alone = append(alone, f.score(t, system, b).Branches[0])
			}
			for _, cfg := range c.cfgs {
				f := newFake(t, cfg)
				res := f.score(t, system, branches...)
				for i := range branches {
					for j := range c.cands {
						if d := math.Abs(res.Branches[i].LogProbs[j] - alone[i].LogProbs[j]); d > 1e-9 {
							t.Errorf("config %+v, %q, candidate %d: log-probability %v together, %v alone",
								cfg, questions[i], j, res.Branches[i].LogProbs[j], alone[i].LogProbs[j])
						}
					}
				}
			}
		})
	}
}

// Scoring beside generation changes neither.
func TestScoreBesideGeneration(t *testing.T) {
	solo := newFake(t, fakeConfig{seqs: 1})
	b := branch{"Yes or no? ", [][]int{{'y'}, {'n'}}}
	wantScore := solo.score(t, system, b).Branches[0]
	wantText := solo.generate(t, prompts[0], 32).Text

	f := newFake(t, fakeConfig{seqs: 2})
	var wg sync.WaitGroup
	for range 3 {
		w := f.work(t, prompts[0], 32, greedy)
		wg.Go(func() {
			res, err := f.run(context.Background(), w)
			if err != nil || res.Text != wantText {
				t.Errorf("generation beside scoring: %+v, %v; want %q", res, err, wantText)
			}
		})
		wg.Go(func() {
			res, err := f.scoreErr(system, b)
			if err != nil {
				t.Error(err)
				return
			}
			if !slices.Equal(res.Branches[0].LogProbs, wantScore.LogProbs) {
				t.Errorf("scoring beside generation: %v, want %v", res.Branches[0].LogProbs, wantScore.LogProbs)
			}
		})
	}
	wg.Wait()
}

// A conversation longer than half of the cells, continued on a runner of
// one sequence: its cache is taken over, not given up to make room for
// the longer prompt that continues it.
func TestPrefixKeptWhenCellsAreTight(t *testing.T) {
	f := newFake(t, fakeConfig{seqs: 1, context: 256})
	first := strings.Repeat("A long first turn. ", 7)
	f.generate(t, first, 16)
	cache := f.Cache(0)
	text := make([]byte, len(cache))
	for i, tok := range cache {
		text[i] = byte(tok) // a token per byte
	}
	next := string(text) + " And a second question?"
	res := f.generate(t, next, 16)
	if res.Usage.Cached != len(cache) {
		t.Errorf("second turn: %d of %d prompt tokens cached, want the %d of the first turn", res.Usage.Cached, res.Usage.Prompt, len(cache))
	}
}
