package runner

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/backend/fakebackend"
)

// speculative is w with drafting asked for.
func speculative(w *Work) *Work {
	w.Speculative = true
	return w
}

// A greedy work gives the same output, token for token, with a drafter
// right 0%, 50%, 75% or 100% of the time, and its sequence's cache holds
// what it does without drafting: rejected drafts leave the KV cache.
// Drafts that are right save steps.
func TestDraftGreedySame(t *testing.T) {
	for _, prompt := range prompts {
		plain := newFake(t, fakeConfig{seqs: 1})
		w := plain.work(t, prompt, 64, plain.noEOS())
		want, err := plain.run(context.Background(), w)
		if err != nil {
			t.Fatal(err)
		}
		wantCache, wantSteps := plain.Cache(0), plain.Stats().Steps
		for _, pct := range []int{0, 50, 75, 100} {
			t.Run(fmt.Sprintf("%s/%d%%", prompt, pct), func(t *testing.T) {
				d := &Replay{Want: wantCache, Percent: pct}
				f := newFake(t, fakeConfig{seqs: 1, drafter: d})
				got, err := f.run(context.Background(), speculative(f.work(t, prompt, 64, f.noEOS())))
				if err != nil {
					t.Fatal(err)
				}
				if got.Text != want.Text || got.Usage.Completion != want.Usage.Completion {
					t.Fatalf("with drafts %q (%d tokens)\nwithout    %q (%d)", got.Text, got.Usage.Completion, want.Text, want.Usage.Completion)
				}
				if c := f.Cache(0); !slices.Equal(c, wantCache) || f.MaxPos(0) != len(c)-1 {
					t.Fatalf("cache of %d tokens (memory to %d), want %d", len(c), f.MaxPos(0), len(wantCache))
				}
				u, steps := got.Usage, f.Stats().Steps
				t.Logf("drafted %d, accepted %d, steps %d (without drafts %d)", u.Drafted, u.Accepted, steps, wantSteps)
				switch {
				case u.Drafted == 0:
					t.Fatal("nothing drafted")
				case pct == 0 && u.Accepted != 0:
					t.Fatalf("%d wrong drafts accepted", u.Accepted)
				case pct == 100 && steps > wantSteps/3:
					t.Fatalf("%d steps with every draft right, %d without", steps, wantSteps)
				case pct >= 50 && steps >= wantSteps:
					t.Fatalf("%d steps, no fewer than %d without drafts", steps, wantSteps)
				case pct == 0 && u.Drafted > 16:
					t.Fatalf("%d drafts while every one is rejected: the draft length does not adapt", u.Drafted)
				}
			})
		}
	}
}

// Stop strings, the token limit and seeded sampling end and pick what
// they do without drafting; work that does not ask for drafts gets none.
func TestDraftLimitsAndSampling(t *testing.T) {
	seeded := greedy
	seeded.Temperature, seeded.Seed = 1, 11
	plain := newFake(t, fakeConfig{seqs: 1})
	full := plain.generate(t, prompts[2], 60)
	cases := []struct {
		name   string
		max    int
		stops  []string
		params backend.SamplerParams
	}{
		{"limit", 7, nil, greedy},
		{"stop", 60, []string{full.Text[20:23]}, greedy},
		{"seeded", 60, nil, seeded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := plain.work(t, prompts[2], c.max, c.params)
			w.Stops = c.stops
			want, err := plain.run(context.Background(), w)
			if err != nil {
				t.Fatal(err)
			}
			d := &counting{Replay: Replay{Want: append(slices.Clone(plain.Cache(0)), 0), Percent: 100}}
			f := newFake(t, fakeConfig{seqs: 1, drafter: d})
			w = speculative(f.work(t, prompts[2], c.max, c.params))
			w.Stops = c.stops
			got, err := f.run(context.Background(), w)
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != want.Text || got.Finish != want.Finish || got.Usage.Completion != want.Usage.Completion {
				t.Fatalf("with drafts %q %v %d, without %q %v %d", got.Text, got.Finish, got.Usage.Completion, want.Text, want.Finish, want.Usage.Completion)
			}
			if got.Usage.Accepted == 0 {
				t.Fatal("no draft accepted")
			}
			if c := f.Cache(0); f.MaxPos(0) != len(c)-1 {
				t.Fatalf("cache of %d tokens, memory to %d", len(c), f.MaxPos(0))
			}
			calls := d.calls
			w = f.work(t, prompts[2], c.max, c.params)
			w.Stops = c.stops
			if res, err := f.run(context.Background(), w); err != nil || res.Usage.Drafted != 0 || d.calls != calls {
				t.Fatalf("work without Speculative: drafted %d, drafter called %d times, %v", res.Usage.Drafted, d.calls-calls, err)
			}
		})
	}
}

// Drafting steps aside while other sequences fill the batch: with n
// sequences generating, each drafts at most its share of a one-stream
// draft step, none at all while a prompt is prefilled or with eight
// generating, and each gives what it gives alone.
func TestDraftStepsAsideForConcurrency(t *testing.T) {
	solo := newFake(t, fakeConfig{seqs: 1})
	var ps, want []string
	for i := range 8 {
		ps = append(ps, fmt.Sprintf("%s %d", prompts[i%4], i))
		res, err := solo.run(context.Background(), solo.work(t, ps[i], 32, solo.noEOS()))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, res.Text)
	}
	var f *fake
	d := &watcher{}
	f = newFake(t, fakeConfig{seqs: 8, drafter: d})
	d.active = func() int { return f.Stats().Active }
	for round, n := range []int{8, 3, 2} {
		var wg sync.WaitGroup
		for i := range n {
			w := speculative(f.work(t, ps[i], 32, f.noEOS()))
			wg.Go(func() {
				res, err := f.run(context.Background(), w)
				if err != nil {
					t.Error(err)
					return
				}
				if res.Text != want[i] {
					t.Errorf("round %d, prompt %q: %q, alone %q", round, ps[i], res.Text, want[i])
				}
			})
		}
		wg.Wait()
	}
	if len(d.asked) == 0 {
		t.Fatal("no sequence drafted, even with two at work")
	}
	for _, a := range d.asked {
		if a[0] > (1+DefaultMaxDraft)/a[1]-1 {
			t.Fatalf("asked for %d drafts with %d sequences at work", a[0], a[1])
		}
	}
}

// watcher drafts nothing, and records the length asked for and the
// sequences at work at each call.
type watcher struct {
	active func() int
	asked  [][2]int
}

func (d *watcher) Draft(_ int, _ []backend.Token, k int, buf []backend.Token) []backend.Token {
	d.asked = append(d.asked, [2]int{k, d.active()})
	return buf
}

func (d *watcher) Close() {}

// Sampled work keeps the target's distribution: over many seeds, the
// first three tokens of a drafted run (top-3 sampling at temperature 1,
// drafts proposing the most likely token) fall into the 27 outcomes as
// often as the model's probabilities say (a chi-square test).
func TestDraftSampledDistribution(t *testing.T) {
	const prompt, runs = "Lily and Ben", 3000
	llm := fakebackend.New(fakebackend.Options{})
	toks, _ := llm.Tokenize(prompt, false)
	// top3 is the three most likely tokens after seq, and their
	// probabilities at temperature 1 within them.
	top3 := func(seq []backend.Token) ([]backend.Token, []float64) {
		ctx, err := llm.NewContext(backend.ContextParams{Context: 64, Batch: 64, Sequences: 1, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		b := ctx.NewBatch(64)
		for i, tk := range seq {
			b.Add(tk, i, []int{0}, i == len(seq)-1)
		}
		if err := ctx.Decode(b); err != nil {
			t.Fatal(err)
		}
		l := ctx.Logits(len(seq) - 1)
		var ts []backend.Token
		var ps []float64
		sum := 0.0
		for _, id := range TopTokens(l, 3) {
			ts = append(ts, backend.Token(id))
			ps = append(ps, math.Exp(float64(l[id]-l[TopTokens(l, 1)[0]])))
			sum += ps[len(ps)-1]
		}
		for i := range ps {
			ps[i] /= sum
		}
		return ts, ps
	}
	expect := map[[3]backend.Token]float64{}
	// best is the drafter's proposal after a sequence: its top token.
	best := map[string]backend.Token{}
	t1s, p1s := top3(toks)
	best[fmt.Sprint(toks)] = t1s[0]
	for i, t1 := range t1s {
		s1 := append(slices.Clone(toks), t1)
		t2s, p2s := top3(s1)
		best[fmt.Sprint(s1)] = t2s[0]
		for j, t2 := range t2s {
			s2 := append(slices.Clone(s1), t2)
			t3s, p3s := top3(s2)
			best[fmt.Sprint(s2)] = t3s[0]
			for k, t3 := range t3s {
				expect[[3]backend.Token{t1, t2, t3}] = p1s[i] * p2s[j] * p3s[k]
			}
		}
	}
	d := &oracle{best: best}
	f := newFake(t, fakeConfig{seqs: 1, drafter: d})
	sp := backend.SamplerParams{Temperature: 1, TopK: 3, TopP: 1}
	seen := map[[3]backend.Token]int{}
	accepted := 0
	for seed := range runs {
		sp.Seed = uint32(seed)
		res, err := f.run(context.Background(), speculative(f.work(t, prompt, 4, sp)))
		if err != nil {
			t.Fatal(err)
		}
		accepted += res.Usage.Accepted
		c := f.Cache(0)
		var k [3]backend.Token
		copy(k[:], c[len(toks):len(toks)+3])
		seen[k]++
	}
	chi := 0.0
	for k, p := range expect {
		e := p * runs
		chi += (float64(seen[k]) - e) * (float64(seen[k]) - e) / e
		delete(seen, k)
	}
	if len(seen) > 0 {
		t.Fatalf("outcomes outside the top 3: %v", seen)
	}
	t.Logf("chi-square %.1f over 27 outcomes, %d drafts accepted in %d runs", chi, accepted, runs)
	if accepted < runs/4 {
		t.Fatalf("%d drafts accepted in %d runs: the test hardly drafts", accepted, runs)
	}
	// 26 degrees of freedom: above 54.1 happens by chance once in a
	// thousand.
	if chi > 54.1 {
		t.Fatalf("chi-square %.1f: the drafted runs' outcomes do not follow the model's distribution", chi)
	}
}

// counting is a Replay that counts its calls.
type counting struct {
	Replay
	calls int
}

func (d *counting) Draft(seq int, tokens []backend.Token, k int, buf []backend.Token) []backend.Token {
	d.calls++
	return d.Replay.Draft(seq, tokens, k, buf)
}

// oracle drafts the most likely token after the sequences it knows.
type oracle struct {
	best map[string]backend.Token
}

func (d *oracle) Draft(_ int, tokens []backend.Token, k int, buf []backend.Token) []backend.Token {
	seq := slices.Clone(tokens)
	for range k {
		t, ok := d.best[fmt.Sprint(seq)]
		if !ok {
			break
		}
		buf = append(buf, t)
		seq = append(seq, t)
	}
	return buf
}

func (d *oracle) Close() {}

// Ngram proposes what followed the latest earlier occurrence of the
// longest tail it finds, and nothing where the tail is new.
func TestNgramDraft(t *testing.T) {
	toks := func(s string) []backend.Token {
		var ts []backend.Token
		for _, b := range []byte(s) {
			ts = append(ts, backend.Token(b))
		}
		return ts
	}
	cases := []struct {
		seq  string
		k    int
		want string
	}{
		{"abcdXYZ abcd", 3, "XYZ"},
		{"abcdXYZ bcdQ abcd", 3, "XYZ"}, // the 4-gram beats the later 3-gram
		{"zcdXYZ bcdQRS cd", 2, "QR"},   // the latest 2-gram
		{"abcdefg", 4, ""},              // nothing repeats
		{"abab", 8, "ab"},               // up to the end
		{"xyz wxyz", 0, ""},
	}
	for _, c := range cases {
		got := Ngram{}.Draft(0, toks(c.seq), c.k, nil)
		if string(fmt.Sprint(got)) != fmt.Sprint(toks(c.want)) && !(len(got) == 0 && c.want == "") {
			t.Errorf("%q, k=%d: drafted %v, want %q", c.seq, c.k, got, c.want)
		}
	}
}

// Both drafters keep greedy output the same: n-gram lookup on prompts
// that repeat themselves (the fake model never copies, so its drafts are
// rejected and rolled back), and a draft model (the fake model itself,
// whose drafts are all right), which saves most steps.
func TestDrafterGreedySame(t *testing.T) {
	llm := fakebackend.New(fakebackend.Options{})
	model := func() Drafter {
		ctx, err := llm.NewContext(backend.ContextParams{Context: 2048, Batch: 64, Sequences: 2, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		d, err := NewModelDrafter(llm, llm, ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		name string
		d    func() Drafter
	}{{"ngram", func() Drafter { return Ngram{} }}, {"model", model}} {
		t.Run(c.name, func(t *testing.T) {
			plain := newFake(t, fakeConfig{seqs: 2})
			f := newFake(t, fakeConfig{seqs: 2, drafter: c.d()})
			drafted, accepted := 0, 0
			for _, p := range prompts {
				want, err := plain.run(context.Background(), plain.work(t, p, 40, plain.noEOS()))
				if err != nil {
					t.Fatal(err)
				}
				// The prompt again, after its own output: a copy that
				// n-gram lookup finds.
				p2 := p + want.Text + " " + p
				want2, err := plain.run(context.Background(), plain.work(t, p2, 40, plain.noEOS()))
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range []struct {
					p    string
					want *Result
				}{{p, want}, {p2, want2}} {
					got, err := f.run(context.Background(), speculative(f.work(t, c.p, 40, f.noEOS())))
					if err != nil {
						t.Fatal(err)
					}
					if got.Text != c.want.Text {
						t.Fatalf("%q: with drafts %q, without %q", c.p, got.Text, c.want.Text)
					}
					drafted += got.Usage.Drafted
					accepted += got.Usage.Accepted
				}
			}
			if drafted == 0 || c.name == "model" && accepted != drafted {
				t.Fatalf("%d drafted, %d accepted", drafted, accepted)
			}
			t.Logf("%d drafted, %d accepted, %d steps with drafts, %d without", drafted, accepted, f.Stats().Steps, plain.Stats().Steps)
			if c.name == "model" && f.Stats().Steps > plain.Stats().Steps/3 {
				t.Fatalf("%d steps with a perfect draft model for %d without", f.Stats().Steps, plain.Stats().Steps)
			}
		})
	}
}

// otherVocab is the fake model with one token's text changed.
type otherVocab struct{ *fakebackend.Model }

func (o otherVocab) TokenText(t backend.Token) string {
	if t == 'q' {
		return "Q"
	}
	return o.Model.TokenText(t)
}

// A draft model of another vocabulary is refused, with the token named.
func TestModelDrafterVocabulary(t *testing.T) {
	llm := fakebackend.New(fakebackend.Options{})
	ctx, _ := llm.NewContext(backend.ContextParams{Context: 64, Batch: 8, Sequences: 1})
	defer ctx.Close()
	_, err := NewModelDrafter(llm, otherVocab{llm}, ctx, 1)
	if err == nil || !strings.Contains(err.Error(), "token 113") {
		t.Fatalf("got %v, want an error naming token 113", err)
	}
}

// Replay with nothing to replay records the longest tokens it was asked
// to follow; with them, it proposes what follows, right or wrong by
// position, and nothing after a sequence leaves them.
func TestReplay(t *testing.T) {
	d := &Replay{}
	for _, seq := range [][]backend.Token{{1, 2}, {1, 2, 3, 4}, {1, 2, 3}} {
		if got := d.Draft(0, seq, 4, nil); len(got) != 0 {
			t.Fatalf("drafted %v with nothing to replay", got)
		}
	}
	if !slices.Equal(d.Seen, []backend.Token{1, 2, 3, 4}) {
		t.Fatalf("seen %v", d.Seen)
	}
	want := []backend.Token{10, 11, 12, 13, 14, 15, 16, 17}
	right, wrong := &Replay{Want: want, Percent: 100}, &Replay{Want: want, Percent: 0}
	if got := right.Draft(0, want[:3], 3, nil); !slices.Equal(got, want[3:6]) {
		t.Fatalf("all right: %v", got)
	}
	for i, tk := range wrong.Draft(0, want[:3], 3, nil) {
		if tk == want[3+i] {
			t.Fatalf("all wrong: %d is right", tk)
		}
	}
	if got := right.Draft(0, []backend.Token{10, 99}, 3, nil); len(got) != 0 {
		t.Fatalf("drafted %v after leaving Want", got)
	}
}

// On a recurrent state that rolls back over drafts (the current
// llama.cpp's Qwen3.5), a greedy work gives the same output and leaves
// the same cache with a drafter right 0, 50, 75 or 100% of the time as
// without drafting, also when a stop string ends it in the middle of a
// step's drafts; a decision on exactly what it left in its sequence,
// which was cut back and is copied to the branches only after a decode
// (backend.RollbackLimit), scores as a cold runner does.
func TestDraftRecurrentRollback(t *testing.T) {
	// Two sequences, so that a decision's reserved cells leave the
	// idle one's cache in place.
	recurrent := fakeConfig{seqs: 2, recurrent: true, ckptBytes: 1 << 20}
	plain := newFake(t, recurrent)
	full := plain.generate(t, prompts[2], 60)
	fullCache := slices.Clone(plain.Cache(0))
	stop := []string{full.Text[30:33]}
	w := plain.work(t, prompts[2], 60, greedy)
	w.Stops = stop
	want, err := plain.run(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	wantCache := slices.Clone(plain.Cache(0))
	for _, pct := range []int{0, 50, 75, 100} {
		t.Run(fmt.Sprintf("%d%%", pct), func(t *testing.T) {
			cfg := recurrent
			cfg.rollsBack = true
			cfg.drafter = &Replay{Want: append(fullCache, 0), Percent: pct}
			f := newFake(t, cfg)
			w := speculative(f.work(t, prompts[2], 60, greedy))
			w.Stops = stop
			got, err := f.run(context.Background(), w)
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != want.Text || got.Finish != want.Finish {
				t.Fatalf("with drafts %q %v, without %q %v", got.Text, got.Finish, want.Text, want.Finish)
			}
			if c := f.Cache(0); !slices.Equal(c, wantCache) || f.MaxPos(0) != len(c)-1 {
				t.Fatalf("cache of %d tokens (memory to %d), want %d", len(c), f.MaxPos(0), len(wantCache))
			}
			if u := got.Usage; u.Drafted == 0 || pct >= 50 && u.Accepted == 0 {
				t.Fatalf("drafted %d, accepted %d", u.Drafted, u.Accepted)
			}
			b := branch{"?", [][]int{{'a'}, {'b'}, {'c'}}}
			res, err := f.scoreTokens(f.Cache(0), b)
			if err != nil {
				t.Fatalf("a decision on what the drafted work left: %v", err)
			}
			cold, err := newFake(t, recurrent).scoreTokens(wantCache, b)
			if err != nil {
				t.Fatal(err)
			}
			if res.Usage.Cached == 0 {
				t.Error("the decision reused nothing of the sequence")
			}
			if !slices.Equal(res.Branches[0].LogProbs, cold.Branches[0].LogProbs) {
				t.Errorf("a decision on what the drafted work left: %v, a cold runner %v", res.Branches[0].LogProbs, cold.Branches[0].LogProbs)
			}
		})
	}
}
