package decision_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/inferkit/inferkit/decision"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

// The metrics against values computed by hand.
func TestMeasure(t *testing.T) {
	examples := []decision.Example{
		{Probabilities: []float64{0.7, 0.2, 0.1}, Answer: 0},
		{Probabilities: []float64{0.4, 0.6}, Answer: 0},
	}
	m, err := decision.Measure(examples, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The first is right, the second wrong.
	near(t, "accuracy", m.Accuracy, 0.5, 0)
	// (−ln 0.7 − ln 0.4) / 2.
	near(t, "log loss", m.LogLoss, (-math.Log(0.7)-math.Log(0.4))/2, 1e-12)
	// ((0.3² + 0.2² + 0.1²) + (0.6² + 0.6²)) / 2 = (0.14 + 0.72) / 2.
	near(t, "Brier", m.Brier, 0.43, 1e-12)
	// Top 0.7 in bin 7, right: |1 − 0.7|; top 0.6 in bin 6, wrong:
	// |0 − 0.6|; each half the examples.
	near(t, "ECE", m.ECE, 0.5*0.3+0.5*0.6, 1e-12)

	// At temperature 2 each probability is raised to 1/2, then the
	// options renormalised: the second example's right option has
	// √0.4 / (√0.4 + √0.6).
	m, err = decision.Measure(examples, 2)
	if err != nil {
		t.Fatal(err)
	}
	a := []float64{math.Sqrt(0.7), math.Sqrt(0.2), math.Sqrt(0.1)}
	sa := a[0] + a[1] + a[2]
	b0 := math.Sqrt(0.4) / (math.Sqrt(0.4) + math.Sqrt(0.6))
	near(t, "accuracy at 2", m.Accuracy, 0.5, 0)
	near(t, "log loss at 2", m.LogLoss, (-math.Log(a[0]/sa)-math.Log(b0))/2, 1e-12)
	brier := math.Pow(1-a[0]/sa, 2) + math.Pow(a[1]/sa, 2) + math.Pow(a[2]/sa, 2) + 2*math.Pow(1-b0, 2)
	near(t, "Brier at 2", m.Brier, brier/2, 1e-12)
	// Both tops now fall in bin 5: a[0]/sa ≈ 0.523 (right) and 1 − b0 ≈
	// 0.551 (wrong), so the bin's accuracy is 1/2.
	near(t, "ECE at 2", m.ECE, math.Abs(0.5-(a[0]/sa+1-b0)/2), 1e-12)
}

// ECE's bins are [k/10, (k+1)/10), the last closed: a top probability of
// exactly 0.5 is in the bin of 0.55, not of 0.45; 1 is in the last.
func TestMeasureBins(t *testing.T) {
	for _, c := range []struct {
		name     string
		examples []decision.Example
		ece      float64
	}{
		// 0.5 (right) and 0.55 (wrong) share a bin: accuracy 1/2, mean
		// top 0.525.
		{"edge goes up", []decision.Example{{Probabilities: []float64{0.5, 0.5}}, {Probabilities: []float64{0.55, 0.45}, Answer: 1}}, 0.025},
		// With three options a top can be under 0.5: 0.5 (right) in bin 5,
		// 0.45 (wrong) in bin 4.
		{"below the edge", []decision.Example{{Probabilities: []float64{0.5, 0.25, 0.25}}, {Probabilities: []float64{0.45, 0.3, 0.25}, Answer: 1}}, 0.5*0.5 + 0.5*0.45},
		{"one is in the last bin", []decision.Example{{Probabilities: []float64{1, 0}}, {Probabilities: []float64{0.95, 0.05}}}, 0.025},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := decision.Measure(c.examples, 1)
			if err != nil {
				t.Fatal(err)
			}
			near(t, "ECE", m.ECE, c.ece, 1e-12)
		})
	}
}

// synthetic draws n examples of k options whose right answers follow
// softmax(z), for logits z of the given spread, and reports them as a
// model overconfident by t0 would: softmax(z / t0).
func synthetic(r *rand.Rand, n, k int, spread, t0 float64) []decision.Example {
	out := make([]decision.Example, n)
	for i := range out {
		z := make([]float64, k)
		var sum float64
		for j := range z {
			z[j] = r.NormFloat64() * spread
			sum += math.Exp(z[j])
		}
		u, answer := r.Float64()*sum, k-1
		for j := range z {
			if u -= math.Exp(z[j]); u <= 0 {
				answer = j
				break
			}
		}
		p := make([]float64, k)
		var norm float64
		for j := range z {
			p[j] = math.Exp(z[j] / t0)
			norm += p[j]
		}
		for j := range p {
			p[j] /= norm
		}
		out[i] = decision.Example{Probabilities: p, Answer: answer}
	}
	return out
}

// A model overconfident by a known factor (it reports softmax(z/0.5) where
// the truth is softmax(z)) gets temperature 2 back within 5%, and one
// underconfident by 2 gets 0.5; the held-out log loss and ECE improve.
func TestCalibrate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, t0 := range []float64{0.5, 2} {
		train, heldOut := synthetic(r, 20000, 4, 1.5, t0), synthetic(r, 5000, 4, 1.5, t0)
		rep, err := decision.Calibrate(train, heldOut)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("reported at 1/%v: fitted %.4f; held out: log loss %.4f → %.4f, ECE %.4f → %.4f", t0, rep.Temperature, rep.Before.LogLoss, rep.After.LogLoss, rep.Before.ECE, rep.After.ECE)
		if want := 1 / t0; math.Abs(rep.Temperature-want) > 0.05*want {
			t.Errorf("reported at 1/%v: fitted temperature %v, want %v within 5%%", t0, rep.Temperature, want)
		}
		if rep.After.LogLoss >= rep.Before.LogLoss || rep.After.ECE >= rep.Before.ECE || rep.After.Brier >= rep.Before.Brier {
			t.Errorf("reported at 1/%v: before %+v, after %+v", t0, rep.Before, rep.After)
		}
		if rep.After.Accuracy != rep.Before.Accuracy || rep.Fitted != len(train) {
			t.Errorf("a temperature changed the accuracy, or the count: %+v", rep)
		}
	}
}

// Perfect answers want ever more certainty: the fit stops at its bound.
// Bad examples are refused.
func TestFitTemperatureEdges(t *testing.T) {
	right := []decision.Example{{Probabilities: []float64{0.6, 0.4}}, {Probabilities: []float64{0.3, 0.7}, Answer: 1}}
	if got, err := decision.FitTemperature(right); err != nil || got != decision.MinTemperature {
		t.Errorf("always right: %v, %v; want %v", got, err, decision.MinTemperature)
	}
	for _, bad := range [][]decision.Example{
		nil,
		{{Probabilities: []float64{1}}},
		{{Probabilities: []float64{0.5, 0.5}, Answer: 2}},
		{{Probabilities: []float64{0.5, 0.5}, Answer: -1}},
		{{Probabilities: []float64{math.NaN(), 0.5}}},
		{{Probabilities: []float64{-0.1, 0.5}}},
		{{Probabilities: []float64{math.Inf(1), 0.5}}},
	} {
		if _, err := decision.FitTemperature(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
		if _, err := decision.Measure(bad, 1); err == nil {
			t.Errorf("%v: Measure gave no error", bad)
		}
	}
	for _, temp := range []float64{0, 1e-320, decision.MinTemperature / 2, decision.MaxTemperature * 2, math.Inf(1), math.NaN()} {
		if _, err := decision.Measure(right, temp); err == nil {
			t.Errorf("temperature %v: no error", temp)
		}
	}
	// A flat loss: no temperature does better than 1.
	flat := []decision.Example{{Probabilities: []float64{0.5, 0.5}}, {Probabilities: []float64{0.5, 0.5}, Answer: 1}}
	if got, err := decision.FitTemperature(flat); err != nil || got != 1 {
		t.Errorf("uniform examples: %v, %v; want 1", got, err)
	}
	// Zero probabilities stay finite.
	m, err := decision.Measure([]decision.Example{{Probabilities: []float64{0, 1}}}, 1)
	if err != nil || math.IsInf(m.LogLoss, 0) || math.IsNaN(m.LogLoss) {
		t.Errorf("a zero on the right answer: %+v, %v", m, err)
	}
}

// ExampleOf reads an Evaluator's answer in the order of Example.
func TestExampleOf(t *testing.T) {
	ev, _ := evaluator(t, decision.Config{})
	req := decode(t, mixed)
	res, err := ev.Evaluate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id   string
		want func(decision.Answer) []float64
	}{
		{"refund", func(a decision.Answer) []float64 { return []float64{*a.Noul, 1 - *a.Noul} }},
		{"topic", func(a decision.Answer) []float64 {
			p := a.Probabilities
			return []float64{p["shipping"], p["billing"], p["other"]}
		}},
		{"anger", func(a decision.Answer) []float64 {
			p := a.Probabilities
			return []float64{p["0"], p["1"], p["2"], p["3"]}
		}},
	} {
		a := res.Answers[c.id]
		x, err := decision.ExampleOf(req.Questions[c.id], a, 1)
		if err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		if want := c.want(a); !slices.Equal(x.Probabilities, want) || x.Answer != 1 {
			t.Errorf("%s: %+v, want %v and answer 1", c.id, x, want)
		}
		if _, err := decision.ExampleOf(req.Questions[c.id], a, len(x.Probabilities)); err == nil {
			t.Errorf("%s: an answer past the options is an example", c.id)
		}
	}
	if _, err := decision.ExampleOf(req.Questions["refund"], res.Answers["topic"], 0); err == nil {
		t.Error("a choice's answer is an example of a noul")
	}
}

func TestLikeliest(t *testing.T) {
	for _, c := range []struct {
		p    []float64
		want int
	}{{[]float64{0.2, 0.5, 0.3}, 1}, {[]float64{0.5, 0.5}, 0}, {[]float64{1}, 0}} {
		if got := (decision.Example{Probabilities: c.p}).Likeliest(); got != c.want {
			t.Errorf("%v: %d, want %d", c.p, got, c.want)
		}
	}
}
