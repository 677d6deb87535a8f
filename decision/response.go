package decision

import (
	"math"
	"strconv"
)

// Response is the System One answer to a Request.
type Response struct {
	Model   string            `json:"model"`
	Answers map[string]Answer `json:"answers"`
	Usage   Usage             `json:"usage"`
}

// Usage counts tokens: every token of the prompt is input; nothing is
// generated.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Answer is the answer to one question. Which fields are set depends on
// Type:
//   - noul: Noul, the probability of yes.
//   - choice: Choice, the most likely option; Probabilities by option
//     name; Confidence.
//   - score: Score, the expected level index (0 for the first label);
//     Legend, each index's label; Probabilities by index; Confidence.
//
// Probabilities cover exactly the allowed options and sum to 1.
// Confidence is 1 minus the entropy of the probabilities divided by its
// maximum, log(number of options): 1 for a certain answer, 0 for a uniform
// one. OptionMass is the share of the model's next-token probability that
// fell on the options' labels at all (absent for models that do not
// predict tokens): a low value means the model wanted to say something
// else.
type Answer struct {
	Type          string             `json:"type"`
	Noul          *float64           `json:"noul,omitzero"`
	Choice        string             `json:"choice,omitzero"`
	Score         *float64           `json:"score,omitzero"`
	Legend        map[string]string  `json:"legend,omitzero"`
	Probabilities map[string]float64 `json:"probabilities,omitzero"`
	Confidence    *float64           `json:"confidence,omitzero"`
	OptionMass    *float64           `json:"option_mass,omitzero"`
}

// distribution turns the log-probabilities of a question's options into
// probabilities at temperature t: a softmax over the options only.
func distribution(logp []float64, t float64) []float64 {
	hi := math.Inf(-1)
	for _, l := range logp {
		hi = max(hi, l/t)
	}
	p := make([]float64, len(logp))
	var sum float64
	for i, l := range logp {
		p[i] = math.Exp(l/t - hi)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// confidence is 1 - H(p)/log(len(p)).
func confidence(p []float64) float64 {
	if len(p) < 2 {
		return 1
	}
	var h float64
	for _, x := range p {
		if x > 0 {
			h -= x * math.Log(x)
		}
	}
	return max(0, min(1, 1-h/math.Log(float64(len(p)))))
}

// answer builds the answer to q from its options' probabilities p (in the
// order of q's options, labels, or yes then no), and the option mass
// (negative: unknown).
func answer(q Question, p []float64, mass float64) Answer {
	a := Answer{Type: q.Type}
	if mass >= 0 {
		m := min(mass, 1)
		a.OptionMass = &m
	}
	c := confidence(p)
	switch q.Type {
	case TypeNoul:
		yes := p[0]
		a.Noul = &yes
	case TypeChoice:
		a.Probabilities = map[string]float64{}
		best := 0
		for i, o := range q.Options {
			a.Probabilities[o.Name] = p[i]
			if p[i] > p[best] {
				best = i
			}
		}
		a.Choice = q.Options[best].Name
		a.Confidence = &c
	case TypeScore:
		a.Probabilities = map[string]float64{}
		a.Legend = map[string]string{}
		var mean float64
		for i, l := range q.Labels {
			k := strconv.Itoa(i)
			a.Probabilities[k] = p[i]
			a.Legend[k] = l
			mean += float64(i) * p[i]
		}
		a.Score = &mean
		a.Confidence = &c
	}
	return a
}
