package decision_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"hash/fnv"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fakeEngine is a deterministic stand-in for the engine: every rune is a
// token (its code point), the chat template is ChatML, and a candidate's
// log-probability is a hash of the branch's text and the candidate. Like
// the engine, it reads inference.Literal's marks as no text.
type fakeEngine struct {
	mu    sync.Mutex
	calls []inference.ScoreRequest
}

func (f *fakeEngine) Tokenize(_, text string) ([]int, error) {
	var out []int
	for _, r := range text {
		out = append(out, int(r))
	}
	return out, nil
}

func (f *fakeEngine) RenderPrompt(req inference.Request) (string, error) {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString("<|im_start|>" + string(m.Role) + "\n" + m.Content[0].Text + "<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String(), nil
}

func (f *fakeEngine) PrepareScore(req inference.ScoreRequest) (*inference.PreparedScore, error) {
	return &inference.PreparedScore{Request: req}, nil
}

func (f *fakeEngine) RunScore(_ context.Context, p *inference.PreparedScore) (inference.ScoreResult, error) {
	req := p.Request
	f.mu.Lock()
	f.calls = append(f.calls, req)
	f.mu.Unlock()
	unmark := strings.NewReplacer("\uE001", "", "\uE002", "")
	prefix := unmark.Replace(req.Prefix)
	res := inference.ScoreResult{Usage: inference.Usage{PromptTokens: utf8.RuneCountInString(prefix)}}
	for _, b := range req.Branches {
		text := unmark.Replace(b.Text)
		res.Usage.PromptTokens += utf8.RuneCountInString(text)
		var bs inference.BranchScore
		for _, c := range b.Candidates {
			var lp float64
			for i, tok := range c {
				h := fnv.New64a()
				h.Write([]byte(prefix + text))
				for _, t := range c[:i+1] {
					h.Write([]byte{byte(t), byte(t >> 8)})
				}
				lp += -0.1 - float64(h.Sum64()%4000)/1000 // in (-4.1, -0.1]
				_ = tok
			}
			bs.LogProbs = append(bs.LogProbs, lp)
			bs.Probabilities = append(bs.Probabilities, math.Exp(lp))
		}
		res.Branches = append(res.Branches, bs)
	}
	return res, nil
}

func evaluator(t *testing.T, cfg decision.Config) (*decision.Evaluator, *fakeEngine) {
	t.Helper()
	f := &fakeEngine{}
	if cfg.Engine == nil {
		cfg.Engine = f
	}
	if cfg.Model == "" {
		cfg.Model = "fake"
	}
	ev, err := decision.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ev, f
}

func decode(t *testing.T, s string) decision.Request {
	t.Helper()
	var req decision.Request
	if err := json.Unmarshal([]byte(s), &req); err != nil {
		t.Fatal(err)
	}
	return req
}

const mixed = `{"model": "system-one-340m", "state": "The customer writes: my order arrived broken and I want my money back.",
 "questions": {
  "refund": {"type": "noul", "instructions": "Does the customer ask for a refund?"},
  "topic": {"type": "choice", "instructions": "What is the message about?", "criteria": {"shipping": "delivery, delays, damage in transit", "billing": "payments and refunds", "other": "anything else"}},
  "anger": {"type": "score", "instructions": "How angry is the customer?", "criteria": ["calm", "annoyed", "angry", "furious"]}
 }}`

// The System One shape of a response, against golden files.
func TestGolden(t *testing.T) {
	for _, c := range []struct{ name, req string }{
		{"mixed", mixed},
		{"choice", `{"model": "m", "state": "Paris is the capital of France.", "questions": {"country": {"type": "choice", "criteria": {"France": "", "Spain": "", "Italy": "", "Germany": "a country"}}}}`},
		{"score", `{"model": "m", "state": "Five stars, would buy again!", "questions": {"stars": {"type": "score", "criteria": ["1", "2", "3", "4", "5"]}}}`},
		{"noul", `{"model": "m", "state": "null", "questions": {"empty": {"type": "noul"}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev, _ := evaluator(t, decision.Config{})
			res, err := ev.Evaluate(context.Background(), decode(t, c.req))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(res, "", "  ")
			got = append(got, '\n')
			path := filepath.Join("testdata", c.name+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("response differs from %s (run with -update to accept):\n%s", path, got)
			}
		})
	}
}

// checkAnswers checks the invariants of every answer: probabilities over
// exactly the allowed options, summing to 1; confidence and option mass
// in [0, 1]; the choice the most likely option; the score the expected
// index.
func checkAnswers(t *testing.T, req decision.Request, res decision.Response) {
	t.Helper()
	if res.Usage.OutputTokens != 0 || res.Usage.InputTokens <= 0 {
		t.Errorf("usage %+v", res.Usage)
	}
	if got, want := slices.Sorted(maps.Keys(res.Answers)), slices.Sorted(maps.Keys(req.Questions)); !slices.Equal(got, want) {
		t.Fatalf("answers %v, questions %v", got, want)
	}
	unit := func(what string, p *float64) {
		if p == nil || *p < 0 || *p > 1 || math.IsNaN(*p) {
			t.Errorf("%s: %v", what, p)
		}
	}
	for name, q := range req.Questions {
		a := res.Answers[name]
		if a.Type != q.Type {
			t.Errorf("%s: type %q, want %q", name, a.Type, q.Type)
		}
		unit(name+" option mass", a.OptionMass)
		unit(name+" entropy confidence", &a.EntropyConfidence)
		var keys []string
		switch q.Type {
		case decision.TypeNoul:
			unit(name+" noul", a.Noul)
			if a.Confidence != nil || a.Probabilities != nil {
				t.Errorf("%s: a noul with confidence %v, probabilities %v", name, a.Confidence, a.Probabilities)
			}
			continue
		case decision.TypeChoice:
			for _, o := range q.Options {
				keys = append(keys, o.Name)
			}
		case decision.TypeScore:
			var mean float64
			for i, l := range q.Labels {
				k := string(rune('0' + i))
				keys = append(keys, k)
				mean += float64(i) * a.Probabilities[k]
				// A level sent as a string comes back as that string;
				// the other forms are checked where they are sent.
				var got string
				if err := json.Unmarshal(a.Legend[k], &got); a.Legend[k] == nil || err == nil && got != l {
					t.Errorf("%s: legend %v", name, a.Legend)
				}
			}
			if a.Score == nil || math.Abs(*a.Score-mean) > 1e-12 {
				t.Errorf("%s: score %v, want %v", name, a.Score, mean)
			}
		}
		unit(name+" confidence", a.Confidence)
		if got := slices.Sorted(maps.Keys(a.Probabilities)); !slices.Equal(got, slices.Sorted(slices.Values(keys))) {
			t.Errorf("%s: probabilities over %v, want %v", name, got, keys)
		}
		var sum float64
		for _, p := range a.Probabilities {
			sum += p
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("%s: probabilities sum to %v", name, sum)
		}
		if q.Type == decision.TypeChoice {
			for k, p := range a.Probabilities {
				if p > a.Probabilities[a.Choice] {
					t.Errorf("%s: choice %q, but %q is more likely", name, a.Choice, k)
				}
			}
		}
		if want := referenceConfidence(q.Type, keys, a.Probabilities); math.Abs(*a.Confidence-want) > 1e-12 {
			t.Errorf("%s: confidence %v, System One's formula gives %v", name, *a.Confidence, want)
		}
	}
}

// referenceConfidence is System One's confidence of probabilities p over
// keys: for a choice (m − 1/n)/(1 − 1/n), for a score
// max(0, 1 − Σ pᵢ·|i − k| / D) with D = (1/n)·Σ|i − (n−1)/2|.
func referenceConfidence(typ string, keys []string, p map[string]float64) float64 {
	n := float64(len(keys))
	var m float64
	k := 0
	for i, key := range keys {
		if p[key] > m {
			m, k = p[key], i
		}
	}
	if typ == decision.TypeChoice {
		return (m - 1/n) / (1 - 1/n)
	}
	var spread, d float64
	for i, key := range keys {
		spread += p[key] * math.Abs(float64(i-k))
		d += math.Abs(float64(i) - (n-1)/2)
	}
	return max(0, 1-spread/(d/n))
}

func TestAnswers(t *testing.T) {
	ev, f := evaluator(t, decision.Config{})
	req := decode(t, mixed)
	res, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkAnswers(t, req, res)
	if len(f.calls) != 1 || len(f.calls[0].Branches) != 3 {
		t.Fatalf("%d Score calls, want one with 3 branches", len(f.calls))
	}
	// The state is in the prefix, shared by the branches; the questions
	// are not.
	if c := f.calls[0]; !strings.Contains(c.Prefix, req.State) || strings.Contains(c.Prefix, "Question") {
		t.Errorf("prefix %q", c.Prefix)
	}
	for _, b := range f.calls[0].Branches {
		if !strings.HasSuffix(b.Text, "<|im_start|>assistant\n") || strings.Contains(b.Text, req.State) {
			t.Errorf("branch %q", b.Text)
		}
	}
}

// Questions sent together or one by one get the same answers.
func TestTogetherOrAlone(t *testing.T) {
	ev, _ := evaluator(t, decision.Config{})
	req := decode(t, mixed)
	all, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for name, q := range req.Questions {
		one := req
		one.Questions = map[string]decision.Question{name: q}
		res, err := ev.Evaluate(context.Background(), one)
		if err != nil {
			t.Fatal(err)
		}
		a, b := res.Answers[name], all.Answers[name]
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("%s: alone %s, together %s", name, ja, jb)
		}
	}
}

// A calibration temperature above 1 flattens the distribution.
func TestTemperature(t *testing.T) {
	req := decode(t, mixed)
	plain, _ := evaluator(t, decision.Config{})
	hot, _ := evaluator(t, decision.Config{Temperature: 4})
	a, err := plain.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := hot.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"topic", "anger"} {
		if *b.Answers[name].Confidence >= *a.Answers[name].Confidence {
			t.Errorf("%s: confidence %v at temperature 4, %v at 1", name, *b.Answers[name].Confidence, *a.Answers[name].Confidence)
		}
	}
	if _, err := decision.New(decision.Config{Engine: &fakeEngine{}, Model: "m", Temperature: -1}); err == nil {
		t.Error("negative temperature accepted")
	}
}

func TestValidation(t *testing.T) {
	ev, f := evaluator(t, decision.Config{})
	q := `{"a": {"type": "noul"}}`
	many := make([]string, 101)
	for i := range many {
		many[i] = `"q` + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + `": {"type": "noul"}`
	}
	opts := make([]string, decision.MaxOptions+1)
	for i := range opts {
		opts[i] = `"o` + strings.Repeat("x", i) + `": ""`
	}
	for _, c := range []struct{ name, req, param string }{
		{"empty state", `{"model": "m", "state": "", "questions": ` + q + `}`, "state"},
		{"long state", `{"model": "m", "state": "` + strings.Repeat("é", 100001) + `", "questions": ` + q + `}`, "state"},
		{"no questions", `{"model": "m", "state": "s", "questions": {}}`, "questions"},
		{"101 questions", `{"model": "m", "state": "s", "questions": {` + strings.Join(many, ",") + `}}`, "questions"},
		{"no type", `{"model": "m", "state": "s", "questions": {"a": {}}}`, "questions.a.type"},
		{"unknown type", `{"model": "m", "state": "s", "questions": {"a": {"type": "maybe"}}}`, "questions.a.type"},
		{"choice without options", `{"model": "m", "state": "s", "questions": {"a": {"type": "choice"}}}`, "questions.a.criteria"},
		{"choice empty options", `{"model": "m", "state": "s", "questions": {"a": {"type": "choice", "criteria": {}}}}`, "questions.a.criteria"},
		{"choice duplicate", `{"model": "m", "state": "s", "questions": {"a": {"type": "choice", "criteria": {"x": "1", "x": "2"}}}}`, "questions.a.criteria"},
		{"choice array", `{"model": "m", "state": "s", "questions": {"a": {"type": "choice", "criteria": ["x", "y"]}}}`, "questions.a.criteria"},
		{"choice too many", `{"model": "m", "state": "s", "questions": {"a": {"type": "choice", "criteria": {` + strings.Join(opts, ",") + `}}}}`, "questions.a.criteria"},
		{"no state", `{"model": "m", "questions": ` + q + `}`, "state"},
		{"null state", `{"model": "m", "state": null, "questions": ` + q + `}`, "state"},
		{"numeric state", `{"model": "m", "state": 5, "questions": ` + q + `}`, "state"},
		{"JSON state too long", `{"model": "m", "state": {"a": "` + strings.Repeat("é", 99995) + `"}, "questions": ` + q + `}`, "state"},
		{"no questions field", `{"model": "m", "state": "s"}`, "questions"},
		{"empty id", `{"model": "m", "state": "s", "questions": {"": {"type": "noul"}}}`, "questions."},
		{"numeric instructions", `{"model": "m", "state": "s", "questions": {"a": {"type": "noul", "instructions": 5}}}`, "questions.a.instructions"},
		{"boolean description", `{"model": "m", "state": "s", "questions": {"a": {"type": "choice", "criteria": {"x": true}}}}`, "questions.a.criteria"},
		{"noul other key", `{"model": "m", "state": "s", "questions": {"a": {"type": "noul", "criteria": {"maybe": "x"}}}}`, "questions.a.criteria"},
		{"noul array", `{"model": "m", "state": "s", "questions": {"a": {"type": "noul", "criteria": ["x"]}}}`, "questions.a.criteria"},
		{"score 11 levels", `{"model": "m", "state": "s", "questions": {"a": {"type": "score", "criteria": ["0","1","2","3","4","5","6","7","8","9","10"]}}}`, "questions.a.criteria"},
		{"score one label", `{"model": "m", "state": "s", "questions": {"a": {"type": "score", "criteria": ["only"]}}}`, "questions.a.criteria"},
		{"score object", `{"model": "m", "state": "s", "questions": {"a": {"type": "score", "criteria": {"x": "y"}}}}`, "questions.a.criteria"},
		{"images on text model", `{"model": "m", "state": "s", "questions": ` + q + `, "images": ["iVBORw0KGgo="]}`, "images"},
		{"five images", `{"model": "m", "state": "s", "questions": ` + q + `, "images": [1, 2, 3, 4, 5]}`, "images"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ev.Evaluate(context.Background(), decode(t, c.req))
			var de *decision.Error
			if !errors.As(err, &de) || de.Param != c.param {
				t.Errorf("error %v, want one naming %q", err, c.param)
			}
		})
	}
	if len(f.calls) != 0 {
		t.Errorf("%d Score calls for invalid requests", len(f.calls))
	}
	// Limits themselves are fine.
	ok := `{"model": "m", "state": "` + strings.Repeat("é", 100000) + `", "questions": {` + strings.Join(many[:100], ",") + `}}`
	req := decode(t, ok)
	res, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkAnswers(t, req, res)
}

// A question keeps its wire form through a round trip, options in order.
func TestQuestionJSON(t *testing.T) {
	in := `{"type":"choice","instructions":"Pick","criteria":{"z":"last letter","a":"first letter"}}`
	var q decision.Question
	if err := json.Unmarshal([]byte(in), &q); err != nil {
		t.Fatal(err)
	}
	if len(q.Options) != 2 || q.Options[0].Name != "z" {
		t.Fatalf("options %+v", q.Options)
	}
	out, _ := json.Marshal(q)
	if string(out) != in {
		t.Errorf("round trip %s, want %s", out, in)
	}
}

// sameAlone checks that each question of req, asked alone, gets the
// answer it got in res, asked with the others: batching changes nothing
// beyond float rounding.
func sameAlone(t *testing.T, ev *decision.Evaluator, req decision.Request, res decision.Response) {
	t.Helper()
	for name, q := range req.Questions {
		one := req
		one.Questions = map[string]decision.Question{name: q}
		alone, err := ev.Evaluate(context.Background(), one)
		if err != nil {
			t.Fatal(err)
		}
		a, b := alone.Answers[name], res.Answers[name]
		if a.OptionMass != nil && math.Abs(*a.OptionMass-*b.OptionMass) > 1e-6 {
			t.Errorf("%s: option mass %v alone, %v together", name, *a.OptionMass, *b.OptionMass)
		}
		if a.Noul != nil && math.Abs(*a.Noul-*b.Noul) > 1e-6 {
			t.Errorf("%s: noul %v alone, %v together", name, *a.Noul, *b.Noul)
		}
		for k, p := range b.Probabilities {
			if math.Abs(a.Probabilities[k]-p) > 1e-6 {
				t.Errorf("%s: %s has %v alone, %v together", name, k, a.Probabilities[k], p)
			}
		}
	}
}

// degenerate answers every candidate with one log-probability: -Inf (the
// model gives the labels no probability at all) or NaN.
type degenerate struct {
	fakeEngine
	lp float64
}

func (d *degenerate) RunScore(_ context.Context, p *inference.PreparedScore) (inference.ScoreResult, error) {
	res := inference.ScoreResult{Usage: inference.Usage{PromptTokens: 1}}
	for _, b := range p.Request.Branches {
		var bs inference.BranchScore
		for range b.Candidates {
			bs.LogProbs = append(bs.LogProbs, d.lp)
			bs.Probabilities = append(bs.Probabilities, math.Exp(d.lp))
		}
		res.Branches = append(res.Branches, bs)
	}
	return res, nil
}

// Every number of a response is finite and JSON can carry it, whatever
// the engine's numbers: labels of no probability at all give a uniform
// answer.
func TestFiniteAnswers(t *testing.T) {
	for _, lp := range []float64{math.Inf(-1), math.NaN()} {
		ev, err := decision.New(decision.Config{Engine: &degenerate{lp: lp}, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		req := decode(t, mixed)
		res, err := ev.Evaluate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("log-probability %v: %v", lp, err)
		}
		checkAnswers(t, req, res)
		if p := res.Answers["topic"].Probabilities["billing"]; math.Abs(p-1.0/3) > 1e-12 {
			t.Errorf("log-probability %v: billing has %v, want a uniform 1/3", lp, p)
		}
	}
}

// What a noul's criteria say yes and no mean, and a score's null level,
// reach the question as the model reads it.
func TestCriteriaInPrompt(t *testing.T) {
	ev, f := evaluator(t, decision.Config{})
	req := decode(t, `{"model": "m", "state": "s", "questions": {
		"n": {"type": "noul", "criteria": {"true": "the customer wants money back", "false": {"means": "anything else"}}},
		"s": {"type": "score", "criteria": ["low", null, "high"]}}}`)
	if _, err := ev.Evaluate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	noul, score := f.calls[0].Branches[0].Text, f.calls[0].Branches[1].Text
	for _, want := range []string{"Yes means: \uE001the customer wants money back\uE002", "No means: \uE001{\"means\": \"anything else\"}\uE002"} {
		if !strings.Contains(noul, want) {
			t.Errorf("noul question %q lacks %q", noul, want)
		}
	}
	if !strings.Contains(score, "2. Level 1\n") {
		t.Errorf("score question %q lacks its null level as a number", score)
	}
}

// Prompts are what Evaluate scores: each question's prompt is the
// prefix and its branch, and its labels are the branch's candidates.
func TestPrompts(t *testing.T) {
	ev, f := evaluator(t, decision.Config{})
	req := decode(t, mixed)
	prompts, err := ev.Prompts(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Evaluate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	call := f.calls[0]
	if got, want := len(prompts), len(call.Branches); got != want {
		t.Fatalf("%d prompts for %d branches", got, want)
	}
	wantLabels := map[string][]string{"anger": {"1", "2", "3", "4"}, "refund": {"Y", "N"}, "topic": {"A", "B", "C"}}
	for i, p := range prompts {
		b := call.Branches[i]
		if p.Text != call.Prefix+b.Text {
			t.Errorf("prompt %q is\n%q\nwant the scored\n%q", p.Question, p.Text, call.Prefix+b.Text)
		}
		if !slices.Equal(p.Labels, wantLabels[p.Question]) {
			t.Errorf("%s: labels %q, want %q", p.Question, p.Labels, wantLabels[p.Question])
		}
		for j, l := range p.Labels {
			if toks, _ := f.Tokenize("", l); !slices.Equal(toks, b.Candidates[j]) {
				t.Errorf("%s: label %q is tokens %v, the branch scores %v", p.Question, l, toks, b.Candidates[j])
			}
		}
	}
	if _, err := ev.Prompts(decode(t, `{"model": "m", "state": "s", "questions": {}}`)); !errors.As(err, new(*decision.Error)) {
		t.Errorf("no questions: %v, want an *Error", err)
	}
	withImage := decode(t, mixed)
	withImage.Images = []decision.Image{{}}
	if _, err := ev.Prompts(withImage); err == nil {
		t.Error("a request with images framed")
	}
}
