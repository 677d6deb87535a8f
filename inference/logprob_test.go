//go:build cgo

package inference_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/inference"
)

func TestLogprobsOfAGreedyAnswer(t *testing.T) {
	e := stories(t, 1)
	req := greedy("Once upon a time", 24)
	req.Logprobs, req.TopLogprobs = true, 5

	var streamed []inference.TokenLogprob
	var res inference.Result
	for ev, err := range e.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		streamed = append(streamed, ev.Logprobs...)
		if ev.Final != nil {
			res = *ev.Final
		}
	}
	want := res.Usage.CompletionTokens
	if res.FinishReason == inference.FinishStop {
		want-- // the end-of-turn token is not part of the answer
	}
	if len(res.Logprobs) != want || want == 0 {
		t.Fatalf("%d entries for %d answer tokens", len(res.Logprobs), want)
	}
	if !reflect.DeepEqual(streamed, res.Logprobs) {
		t.Errorf("the stream's entries differ from the result's:\n%v\n%v", streamed, res.Logprobs)
	}
	var text []byte
	for i, lp := range res.Logprobs {
		text = append(text, lp.Bytes...)
		if len(lp.Top) != 5 {
			t.Fatalf("entry %d lists %d alternatives, want 5", i, len(lp.Top))
		}
		// Greedy decoding picks the most likely token: the first
		// alternative, with the same log-probability.
		if lp.Top[0].Token != lp.Token || lp.Top[0].Logprob != lp.Logprob || !bytes.Equal(lp.Top[0].Bytes, lp.Bytes) {
			t.Errorf("entry %d: token %d (%v) is not the first alternative %+v", i, lp.Token, lp.Logprob, lp.Top[0])
		}
		var mass float64
		for k, alt := range lp.Top {
			if alt.Logprob > 0 || math.IsNaN(alt.Logprob) {
				t.Errorf("entry %d alternative %d: log-probability %v", i, k, alt.Logprob)
			}
			if k > 0 && alt.Logprob > lp.Top[k-1].Logprob {
				t.Errorf("entry %d: alternatives out of order: %+v", i, lp.Top)
			}
			mass += math.Exp(alt.Logprob)
		}
		if mass > 1+1e-9 {
			t.Errorf("entry %d: the alternatives' probabilities sum to %v", i, mass)
		}
	}
	if string(text) != res.Text {
		t.Errorf("the entries' bytes are %q, the answer %q", text, res.Text)
	}

	// The values do not depend on the sampler: a hot, seeded run that
	// happens to pick the same first token gives that token the same
	// log-probability.
	again, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Logprobs, res.Logprobs) {
		t.Error("the same greedy request gave other log-probabilities")
	}
	hot := req
	hot.Temperature, hot.Seed, hot.TopLogprobs = ptr(1.5), ptr(int64(7)), 0
	hres, err := e.Generate(context.Background(), hot)
	if err != nil {
		t.Fatal(err)
	}
	if len(hres.Logprobs) == 0 || hres.Logprobs[0].Top != nil {
		t.Fatalf("without TopLogprobs: %+v", hres.Logprobs)
	}
	if hres.Logprobs[0].Token == res.Logprobs[0].Token && hres.Logprobs[0].Logprob != res.Logprobs[0].Logprob {
		t.Errorf("the first token's log-probability is %v when sampled hot, %v greedily", hres.Logprobs[0].Logprob, res.Logprobs[0].Logprob)
	}
}

func TestNoLogprobsUnlessAsked(t *testing.T) {
	e := stories(t, 1)
	for ev, err := range e.Stream(context.Background(), greedy("Once upon a time", 8)) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Logprobs != nil || ev.Final != nil && ev.Final.Logprobs != nil {
			t.Fatalf("an event carries log-probabilities nobody asked for: %+v", ev)
		}
	}
}

func TestChoicesShareThePrompt(t *testing.T) {
	e := stories(t, 4)
	req := greedy("Once upon a time there was a little girl named Lily. She", 16)
	req.Temperature, req.Seed, req.Choices = ptr(1.0), ptr(int64(42)), 3

	results := map[int]inference.Result{}
	texts := map[int]string{}
	for ev, err := range e.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Choice < 0 || ev.Choice >= 3 {
			t.Fatalf("choice %d", ev.Choice)
		}
		if _, done := results[ev.Choice]; done {
			t.Fatalf("an event of choice %d after its final one", ev.Choice)
		}
		texts[ev.Choice] += ev.Text
		if ev.Final != nil {
			results[ev.Choice] = *ev.Final
		}
	}
	if len(results) != 3 {
		t.Fatalf("%d results, want 3", len(results))
	}
	decoded := 0
	for i, res := range results {
		if texts[i] != res.Text {
			t.Errorf("choice %d: streamed %q, result %q", i, texts[i], res.Text)
		}
		decoded += res.Usage.PromptTokens - res.Usage.CachedTokens
	}
	// The choices follow one prefill: the prompt is decoded once, but for
	// its last token, which each choice decodes for its own logits.
	if p := results[0].Usage.PromptTokens; decoded != p+2 {
		t.Errorf("the choices decoded %d prompt tokens, the prompt has %d", decoded, p)
	}
	// Choice i samples as a lone request seeded Seed+i does.
	for i := range 3 {
		one := req
		one.Choices, one.Seed = 1, ptr(int64(42+i))
		res, err := e.Generate(context.Background(), one)
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != results[i].Text {
			t.Errorf("choice %d wrote %q; alone with seed %d: %q", i, results[i].Text, 42+i, res.Text)
		}
	}
	if results[0].Text == results[1].Text && results[1].Text == results[2].Text {
		t.Errorf("three hot choices wrote the same text %q", results[0].Text)
	}
}

func TestChoiceAndLogprobLimits(t *testing.T) {
	e := stories(t, 1)
	for name, c := range map[string]struct {
		edit  func(*inference.Request)
		field string
	}{
		"top 21":           {func(r *inference.Request) { r.Logprobs, r.TopLogprobs = true, 21 }, "TopLogprobs"},
		"top -1":           {func(r *inference.Request) { r.Logprobs, r.TopLogprobs = true, -1 }, "TopLogprobs"},
		"top without":      {func(r *inference.Request) { r.TopLogprobs = 2 }, "TopLogprobs"},
		"17 choices":       {func(r *inference.Request) { r.Choices = 17 }, "Choices"},
		"negative choices": {func(r *inference.Request) { r.Choices = -1 }, "Choices"},
		"generate two":     {func(r *inference.Request) { r.Choices = 2 }, "Choices"},
		"one choice":       {func(r *inference.Request) { r.Choices = 1 }, ""},
	} {
		t.Run(name, func(t *testing.T) {
			req := greedy("Once", 2)
			c.edit(&req)
			_, err := e.Generate(context.Background(), req)
			var fe *inference.FieldError
			switch {
			case c.field == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case c.field == "":
			case !errors.As(err, &fe) || fe.Path.String() != c.field || !errors.Is(err, inference.ErrInvalidRequest):
				t.Fatalf("error %v, want a FieldError on %s", err, c.field)
			}
		})
	}
}

func TestPromptLogprobs(t *testing.T) {
	e := stories(t, 2)
	req := greedy("Once upon a time there was a little girl", 1)
	req.Logprobs, req.PromptLogprobs, req.TopLogprobs = true, true, 3
	res, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	n := res.Usage.PromptTokens
	if len(res.PromptLogprobs) != n || res.Usage.CachedTokens != 0 {
		t.Fatalf("%d prompt entries for %d prompt tokens, %d cached", len(res.PromptLogprobs), n, res.Usage.CachedTokens)
	}
	if first := res.PromptLogprobs[0]; first.Logprob != 0 || first.Top != nil {
		t.Errorf("the first prompt token, which nothing predicts: %+v", first)
	}
	for i, lp := range res.PromptLogprobs[1:] {
		if lp.Logprob > 0 || lp.Logprob < -30 || len(lp.Top) != 3 || lp.Top[0].Logprob < lp.Logprob {
			t.Errorf("prompt entry %d: %+v", i+1, lp)
		}
	}

	// The prompt's text followed by the generated token scores that token
	// as the generation did: the same logits, read at the same position.
	gen := res.Logprobs[0]
	next := greedy(req.Prompt+string(gen.Bytes), 1)
	next.PromptLogprobs, next.PromptOnly = true, true
	scored, err := e.Generate(context.Background(), next)
	if err != nil {
		t.Fatal(err)
	}
	// A stream brings the prompt's entries with its first event.
	var first []inference.TokenLogprob
	events := 0
	for ev, err := range e.Stream(context.Background(), next) {
		if err != nil {
			t.Fatal(err)
		}
		if events++; events == 1 {
			first = ev.PromptLogprobs
		} else if ev.PromptLogprobs != nil {
			t.Errorf("event %d carries the prompt's entries again", events)
		}
	}
	if !reflect.DeepEqual(first, scored.PromptLogprobs) {
		t.Errorf("the first event's prompt entries %v differ from the result's", first)
	}
	if scored.Usage.CompletionTokens != 0 || scored.Text != "" || scored.FinishReason != inference.FinishLength {
		t.Errorf("PromptOnly generated: %+v", scored)
	}
	if len(scored.PromptLogprobs) != n+1 {
		t.Fatalf("the text with the generated token is %d tokens, want %d", len(scored.PromptLogprobs), n+1)
	}
	last := scored.PromptLogprobs[n]
	if last.Token != gen.Token || math.Abs(last.Logprob-gen.Logprob) > 1e-4 {
		t.Errorf("the generated token %d scored %v; as a prompt token %d scored %v", gen.Token, gen.Logprob, last.Token, last.Logprob)
	}
	for i := range n {
		if a, b := scored.PromptLogprobs[i], res.PromptLogprobs[i]; a.Token != b.Token || math.Abs(a.Logprob-b.Logprob) > 1e-4 {
			t.Errorf("prompt token %d: %+v, then %+v", i, b, a)
		}
	}
}

// A prompt longer than one step's share of scored tokens is scored over
// several steps, every token once.
func TestPromptLogprobsOverSteps(t *testing.T) {
	e := stories(t, 1)
	req := greedy(strings.Repeat("Once upon a time there was a little girl. ", 12), 1)
	req.PromptLogprobs, req.PromptOnly, req.TopLogprobs = true, true, 1
	res, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Usage.PromptTokens; n <= 64 || len(res.PromptLogprobs) != n {
		t.Fatalf("%d entries for %d prompt tokens; the test wants more than 64", len(res.PromptLogprobs), n)
	}
	for i, lp := range res.PromptLogprobs[1:] {
		if len(lp.Top) != 1 || lp.Logprob > 0 || lp.Logprob < -40 {
			t.Fatalf("entry %d: %+v", i+1, lp)
		}
	}
}
