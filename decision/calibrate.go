package decision

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Example is one labelled question for calibration: what the model said
// at temperature 1 and what the right answer was. The zero value is no
// valid example: it has no options.
type Example struct {
	// Probabilities are the model's over the question's options at
	// temperature 1, in their order: a choice's options as the request
	// lists them, a score's levels from 0, a noul's yes then no. They
	// need not sum to 1; a zero counts as the smallest probability a
	// float64 holds.
	Probabilities []float64
	// Answer is the index of the right option.
	Answer int
}

// Likeliest is the index of x's most likely option, the first of
// equals: the answer Measure counts as x's.
func (x Example) Likeliest() int { return argmax(x.Probabilities) }

// ExampleOf is the example of an answer a to question q whose right
// option is the index right (a choice's options as q lists them, a
// score's levels from 0, a noul's yes 0 and no 1): a's probabilities in
// the order of Example. They are at temperature 1 when a comes from an
// Evaluator of Config.Temperature 1 (or 0, its default).
func ExampleOf(q Question, a Answer, right int) (Example, error) {
	var p []float64
	switch {
	case q.Type != a.Type:
		return Example{}, fmt.Errorf("decision: an answer of type %q to a question of type %q", a.Type, q.Type)
	case q.Type == TypeNoul && a.Noul != nil:
		p = []float64{*a.Noul, 1 - *a.Noul}
	case q.Type == TypeChoice:
		for _, o := range q.Options {
			p = append(p, a.Probabilities[o.Name])
		}
	case q.Type == TypeScore:
		for i := range q.Labels {
			p = append(p, a.Probabilities[strconv.Itoa(i)])
		}
	}
	x := Example{Probabilities: p, Answer: right}
	if err := check([]Example{x}); err != nil {
		return Example{}, err
	}
	return x, nil
}

// Metrics measure a model's answers against the right ones; Measure
// returns them.
type Metrics struct {
	// Examples is the number of examples measured.
	Examples int
	// Accuracy is the share of examples whose most likely option (the
	// first, on a tie) is the right one.
	Accuracy float64
	// LogLoss is the mean negative natural logarithm of the right
	// option's probability.
	LogLoss float64
	// Brier is the mean over examples of Σᵢ (pᵢ − yᵢ)², where yᵢ is 1 for
	// the right option and 0 for the others: 0 is perfect, 2 the worst.
	Brier float64
	// ECE is the expected calibration error over 10 equal bins of the top
	// probability: Σ over bins of (examples in it / all) × |accuracy in it
	// − mean top probability in it|. Bin k holds top probabilities in
	// [k/10, (k+1)/10), to within 1e-9 of an edge; 1 falls in the last.
	ECE float64
}

// Bounds of the temperatures that FitTemperature returns and Measure
// takes.
const (
	MinTemperature = 0.01
	MaxTemperature = 100.0
)

// logits are an example's log-probabilities, each finite.
func (x Example) logits() []float64 {
	z := make([]float64, len(x.Probabilities))
	for i, p := range x.Probabilities {
		z[i] = math.Log(max(p, math.SmallestNonzeroFloat64))
	}
	return z
}

// check says what is wrong with the examples, if anything.
func check(examples []Example) error {
	if len(examples) == 0 {
		return errors.New("decision: no examples")
	}
	for i, x := range examples {
		switch {
		case len(x.Probabilities) < 2:
			return fmt.Errorf("decision: example %d has %d options, want at least 2", i, len(x.Probabilities))
		case x.Answer < 0 || x.Answer >= len(x.Probabilities):
			return fmt.Errorf("decision: example %d: answer %d of %d options", i, x.Answer, len(x.Probabilities))
		}
		for _, p := range x.Probabilities {
			if p < 0 || math.IsNaN(p) || math.IsInf(p, 0) {
				return fmt.Errorf("decision: example %d has the probability %v", i, p)
			}
		}
	}
	return nil
}

// Measure measures examples at temperature t, within [MinTemperature,
// MaxTemperature]: each example's log-probabilities divided by t, then a
// softmax, as an Evaluator with that Config.Temperature would answer. Like
// every function here, it keeps nothing and is safe for concurrent use.
func Measure(examples []Example, t float64) (Metrics, error) {
	if err := check(examples); err != nil {
		return Metrics{}, err
	}
	if !(t >= MinTemperature && t <= MaxTemperature) {
		return Metrics{}, fmt.Errorf("decision: temperature %v, want %v to %v", t, MinTemperature, MaxTemperature)
	}
	m := Metrics{Examples: len(examples)}
	var bins [10]struct {
		n              int
		right, confSum float64
	}
	for _, x := range examples {
		z := x.logits()
		p := distribution(z, t)
		best := argmax(p)
		right := 0.0
		if best == x.Answer {
			right = 1
		}
		m.Accuracy += right
		m.LogLoss -= logSoftmax(z, t, x.Answer)
		for i, q := range p {
			y := 0.0
			if i == x.Answer {
				y = 1
			}
			m.Brier += (q - y) * (q - y)
		}
		// Within rounding of an edge, a probability counts as on it.
		b := &bins[min(int(p[best]*10+1e-9), 9)]
		b.n++
		b.right += right
		b.confSum += p[best]
	}
	n := float64(len(examples))
	m.Accuracy /= n
	m.LogLoss /= n
	m.Brier /= n
	for _, b := range bins {
		if b.n > 0 {
			m.ECE += float64(b.n) / n * math.Abs(b.right/float64(b.n)-b.confSum/float64(b.n))
		}
	}
	return m, nil
}

// logSoftmax is log softmax(z/t) at i, computed without overflow.
func logSoftmax(z []float64, t float64, i int) float64 {
	hi := math.Inf(-1)
	for _, v := range z {
		hi = max(hi, v/t)
	}
	var sum float64
	for _, v := range z {
		sum += math.Exp(v/t - hi)
	}
	return z[i]/t - hi - math.Log(sum)
}

// FitTemperature returns the temperature, within [MinTemperature,
// MaxTemperature], at which the examples' log loss is least. The log loss
// is convex in 1/t, so its derivative there, the mean over examples of
// the expected log-probability minus the right one's, crosses zero once:
// FitTemperature finds that crossing by bisection. A bound is returned
// when the least log loss lies past it (for instance, when every example
// is right and the loss falls as the model grows ever more certain), and 1
// when the loss is the same at every temperature (every example uniform).
func FitTemperature(examples []Example) (float64, error) {
	if err := check(examples); err != nil {
		return 0, err
	}
	zs := make([][]float64, len(examples))
	for i, x := range examples {
		zs[i] = x.logits()
	}
	// slope is the derivative of the mean log loss in β = 1/t.
	slope := func(beta float64) float64 {
		var g float64
		for i, z := range zs {
			p := distribution(z, 1/beta)
			for j, v := range z {
				g += p[j] * v
			}
			g -= z[examples[i].Answer]
		}
		return g / float64(len(zs))
	}
	lo, hi := math.Log(1/MaxTemperature), math.Log(1/MinTemperature)
	switch atLo, atHi := slope(math.Exp(lo)), slope(math.Exp(hi)); {
	case atLo == 0 && atHi == 0:
		return 1, nil // the loss is flat: no temperature does better
	case atLo >= 0:
		return MaxTemperature, nil
	case atHi <= 0:
		return MinTemperature, nil
	}
	for range 100 {
		mid := (lo + hi) / 2
		if slope(math.Exp(mid)) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 1 / math.Exp((lo+hi)/2), nil
}

// CalibrationReport is what Calibrate found.
type CalibrationReport struct {
	// Temperature is the fitted temperature: the catalog entry's
	// Calibration (catalog.Model), an Evaluator's Config.Temperature.
	Temperature float64
	// Fitted is the number of examples the temperature was fitted on.
	Fitted int
	// Before and After measure the held-out examples at temperature 1 and
	// at the fitted temperature.
	Before, After Metrics
}

// Calibrate fits a temperature on the train examples and measures the
// held-out ones before and after it.
func Calibrate(train, heldOut []Example) (CalibrationReport, error) {
	t, err := FitTemperature(train)
	if err != nil {
		return CalibrationReport{}, fmt.Errorf("%w (fitting)", err)
	}
	r := CalibrationReport{Temperature: t, Fitted: len(train)}
	if r.Before, err = Measure(heldOut, 1); err != nil {
		return CalibrationReport{}, fmt.Errorf("%w (held out)", err)
	}
	r.After, err = Measure(heldOut, t)
	return r, err
}
