//go:build cgo

package decision_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// counter counts the engine's Score runs.
type counter struct {
	*inference.Engine
	runs int
}

func (c *counter) RunScore(ctx context.Context, p *inference.PreparedScore) (inference.ScoreResult, error) {
	c.runs++
	return c.Engine.RunScore(ctx, p)
}

// wideEvaluator runs decisions on the tiny byte-level model with a context
// wide enough for a question listing 255 options, byte by byte.
func wideEvaluator(t *testing.T) (*decision.Evaluator, *counter) {
	t.Helper()
	path := inferencetest.Model(t, inferencetest.Options{ContextLength: 16384})
	e, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "tiny", Path: path, Kind: catalog.KindDecision}}, Threads: 1, Parallel: 1, ContextTokens: 8192})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	c := &counter{Engine: e}
	ev, err := decision.New(decision.Config{Engine: c, Model: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	return ev, c
}

// manyOptions is a choice of n options.
func manyOptions(n int) string {
	opts := make([]string, n)
	for i := range opts {
		opts[i] = fmt.Sprintf(`"o%d": null`, i)
	}
	return `{"type": "choice", "instructions": "Which one?", "criteria": {` + strings.Join(opts, ", ") + `}}`
}

// A choice of 255 options answers in one request, beside the other types,
// with the state decoded once: its labels are numbers of several tokens.
// Each question gets the answer it gets alone.
func TestEngineManyOptions(t *testing.T) {
	ev, c := wideEvaluator(t)
	req := decode(t, `{"model": "tiny", "state": "A short state.", "questions": {
		"wide": `+manyOptions(decision.MaxOptions)+`,
		"narrow": `+manyOptions(3)+`,
		"tens": {"type": "score", "criteria": ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]},
		"yes": {"type": "noul"}}}`)
	res, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if c.runs != 1 {
		t.Errorf("%d Score runs for one request", c.runs)
	}
	checkAnswers(t, req, res)
	if n := len(res.Answers["wide"].Probabilities); n != decision.MaxOptions {
		t.Errorf("%d probabilities for %d options", n, decision.MaxOptions)
	}
	sameAlone(t, ev, req, res)
}

// A question's id is never seen by the model: renamed, it gets the same
// answer, and any non-empty id comes back as sent.
func TestEngineRenamedIDs(t *testing.T) {
	ev, _ := tinyEvaluator(t)
	req := decode(t, mixed)
	res, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	renamed := req
	renamed.Questions = map[string]decision.Question{}
	names := map[string]string{"refund": "ask for.a refund?", "topic": "주제 😀", "anger": " "}
	for id, q := range req.Questions {
		renamed.Questions[names[id]] = q
	}
	got, err := ev.Evaluate(context.Background(), renamed)
	if err != nil {
		t.Fatal(err)
	}
	for id, name := range names {
		a, b := res.Answers[id], got.Answers[name]
		if b.Type != a.Type {
			t.Fatalf("%q: no answer under its new id %q: %v", id, name, got.Answers)
		}
		if a.Noul != nil && math.Abs(*a.Noul-*b.Noul) > 1e-6 {
			t.Errorf("%s renamed %q: noul %v, was %v", id, name, *b.Noul, *a.Noul)
		}
		for k, p := range a.Probabilities {
			if math.Abs(b.Probabilities[k]-p) > 1e-6 {
				t.Errorf("%s renamed %q: %s has %v, was %v", id, name, k, b.Probabilities[k], p)
			}
		}
	}
}

// Every form System One accepts answers on the real engine, and a JSON
// state reads exactly as its canonical text sent as a string.
func TestEngineRequestForms(t *testing.T) {
	ev, _ := tinyEvaluator(t)
	const questions = `{
		"text": {"type": "noul", "instructions": "Is it urgent?"},
		"object": {"type": "choice", "instructions": {"task": "route", "teams": ["billing", "sales"]}, "criteria": {"billing": {"handles": "refunds"}, "sales": null, "ünïcödé 😀": ["a", 1]}},
		"null": {"type": "score", "instructions": null, "criteria": ["Calm", {"level": "cross"}, null, "Very angry"]},
		"bare": {"type": "noul"},
		"yes only": {"type": "noul", "criteria": {"true": "the customer wants money back"}},
		"no only": {"type": "noul", "instructions": ["is", "it", "spam"], "criteria": {"false": null}},
		"both": {"type": "noul", "criteria": {"true": "yes", "false": {"means": "no"}}},
		"null criteria": {"type": "noul", "criteria": null}}`
	withJSON := decode(t, `{"model": "tiny", "state": {"document": "I was charged twice.", "meta": {"n": 2, "ok": false}}, "questions": `+questions+`, "x_nonce": 7}`)
	res, err := ev.Evaluate(context.Background(), withJSON)
	if err != nil {
		t.Fatal(err)
	}
	checkAnswers(t, withJSON, res)
	// Levels come back as sent, whatever their form.
	legend, _ := json.Marshal(res.Answers["null"].Legend)
	if want := `{"0":"Calm","1":{"level":"cross"},"2":null,"3":"Very angry"}`; string(legend) != want {
		t.Errorf("legend %s, want %s", legend, want)
	}
	// A JSON array is a state too.
	list := decode(t, `{"model": "tiny", "state": ["first message", {"from": "customer", "text": "charged twice"}], "questions": `+questions+`}`)
	if list.State != "[\n  \"first message\",\n  {\n    \"from\": \"customer\",\n    \"text\": \"charged twice\"\n  }\n]" {
		t.Errorf("JSON array state reads as\n%s", list.State)
	}
	if res, err := ev.Evaluate(context.Background(), list); err != nil {
		t.Fatal(err)
	} else {
		checkAnswers(t, list, res)
	}
	const canonical = "{\n  \"document\": \"I was charged twice.\",\n  \"meta\": {\n    \"n\": 2,\n    \"ok\": false\n  }\n}"
	if withJSON.State != canonical {
		t.Fatalf("JSON state reads as\n%s\nwant\n%s", withJSON.State, canonical)
	}
	text, _ := json.Marshal(canonical)
	asText := decode(t, `{"model": "tiny", "state": `+string(text)+`, "questions": `+questions+`}`)
	same, err := ev.Evaluate(context.Background(), asText)
	if err != nil {
		t.Fatal(err)
	}
	for id, a := range res.Answers {
		b := same.Answers[id]
		if a.Noul != nil && math.Abs(*a.Noul-*b.Noul) > 1e-6 {
			t.Errorf("%s: noul %v for the JSON state, %v for its text", id, *a.Noul, *b.Noul)
		}
		for k, p := range a.Probabilities {
			if math.Abs(b.Probabilities[k]-p) > 1e-6 {
				t.Errorf("%s: %s has %v for the JSON state, %v for its text", id, k, p, b.Probabilities[k])
			}
		}
	}
}
