//go:build cgo

package decision_test

import (
	"context"
	"encoding/base64"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// tinyEvaluator runs decisions on a tiny byte-level model through the real
// engine.
func tinyEvaluator(t *testing.T) (*decision.Evaluator, *inference.Engine) {
	t.Helper()
	path := inferencetest.Model(t, inferencetest.Options{ContextLength: 4096})
	e, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "tiny", Path: path, Kind: catalog.KindDecision}}, Threads: 1, Parallel: 2, ContextTokens: 2048, BranchContext: 1024})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ev, err := decision.New(decision.Config{Engine: e, Model: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	return ev, e
}

func TestEngineAnswers(t *testing.T) {
	ev, _ := tinyEvaluator(t)
	req := decode(t, mixed)
	res, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkAnswers(t, req, res)

	// Together or one by one: the same numbers.
	sameAlone(t, ev, req, res)
}

// recorder keeps the usage of the engine's last Score.
type recorder struct {
	*inference.Engine
	usage inference.Usage
}

func (r *recorder) RunScore(ctx context.Context, p *inference.PreparedScore) (inference.ScoreResult, error) {
	res, err := r.Engine.RunScore(ctx, p)
	r.usage = res.Usage
	return res, err
}

// A repeated state is not decoded again: the second request finds it in
// the prompt cache, and its answers are the same.
func TestEngineStateCached(t *testing.T) {
	_, e := tinyEvaluator(t)
	rec := &recorder{Engine: e}
	ev, err := decision.New(decision.Config{Engine: rec, Model: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	req := decode(t, mixed)
	first, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if rec.usage.CachedTokens != 0 {
		t.Errorf("first request: %d cached tokens", rec.usage.CachedTokens)
	}
	second, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if rec.usage.CachedTokens <= len(req.State) {
		t.Errorf("second request: %d cached tokens, want the state's prefix (over %d)", rec.usage.CachedTokens, len(req.State))
	}
	if first.Usage != second.Usage {
		t.Errorf("usage %+v then %+v", first.Usage, second.Usage)
	}
	for name, a := range first.Answers {
		if math.Abs(*a.OptionMass-*second.Answers[name].OptionMass) > 1e-6 {
			t.Errorf("%s: %v then %v", name, *a.OptionMass, *second.Answers[name].OptionMass)
		}
	}
}

// A multimodal decision model (a tiny llama with a vision projector) reads
// the images: they count as input tokens, answers are distributions, the
// same images come from the prompt cache with the same answers, and other
// images give other answers.
func TestEngineImages(t *testing.T) {
	e, err := inference.New(inference.Config{Threads: 1, Parallel: 2, ContextTokens: 1024, Models: []catalog.Model{{
		ID: "vision", Kind: catalog.KindDecision,
		Path:      inferencetest.Model(t, inferencetest.Options{}),
		Projector: inferencetest.Projector(t, inferencetest.ProjectorOptions{}),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rec := &recorder{Engine: e}
	ev, err := decision.New(decision.Config{Engine: rec, Model: "vision", Images: true})
	if err != nil {
		t.Fatal(err)
	}
	cat, dog := base64.StdEncoding.EncodeToString(inferencetest.PNG(64, 48, 1)), base64.StdEncoding.EncodeToString(inferencetest.PNG(64, 48, 2))
	ask := func(images ...string) decision.Response {
		t.Helper()
		body := `{"model": "vision", "state": "A photo from the garden.", "questions": {
			"animal": {"type": "choice", "criteria": {"cat": "a cat", "dog": "a dog", "none": "no animal"}},
			"outdoors": {"type": "noul", "instructions": "Is it outdoors?"}}, "images": ["` + strings.Join(images, `", "`) + `"]}`
		req := decode(t, body)
		res, err := ev.Evaluate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		checkAnswers(t, req, res)
		return res
	}
	text := decode(t, `{"model": "vision", "state": "A photo from the garden.", "questions": {"outdoors": {"type": "noul"}}}`)
	if _, err := ev.Evaluate(context.Background(), text); err != nil {
		t.Fatal(err)
	}
	first := ask(cat, dog)
	// Two images of 16 tokens each and their labels, over the text.
	if first.Usage.InputTokens < 32+len("A photo from the garden.") {
		t.Errorf("usage %+v: the images' tokens are missing", first.Usage)
	}
	again := ask(cat, dog)
	if rec.usage.CachedTokens < 32 {
		t.Errorf("repeat: %d cached tokens, want the images' among them", rec.usage.CachedTokens)
	}
	if again.Answers["animal"].Probabilities["cat"] != first.Answers["animal"].Probabilities["cat"] {
		t.Errorf("repeat: P(cat) %v, first %v", again.Answers["animal"].Probabilities["cat"], first.Answers["animal"].Probabilities["cat"])
	}
	other := ask(dog, cat)
	if other.Answers["animal"].Probabilities["cat"] == first.Answers["animal"].Probabilities["cat"] {
		t.Error("swapped images give the very same P(cat): the images are not read")
	}

	bad := decode(t, `{"model": "vision", "state": "s", "questions": {"q": {"type": "noul"}}, "images": ["`+cat+`", "R0lGODlhAQABAAAAACw="]}`)
	_, err = ev.Evaluate(context.Background(), bad)
	if de, ok := errors.AsType[*decision.Error](err); !ok || de.Param != "images[1]" {
		t.Errorf("a broken GIF: %v, want an error naming images[1]", err)
	}
}
