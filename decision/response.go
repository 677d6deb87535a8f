package decision

import (
	"encoding/json"
	"math"
	"slices"
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
//   - score: Score, the expected level index (0 for the first level, the
//     sum of each index times its probability); Legend, each index's level
//     as the request sent it; Probabilities by index; Confidence.
//
// Probabilities cover exactly the allowed options and sum to 1; every
// number is finite.
//
// Confidence follows System One's definition: for a choice of n options
// whose largest probability is m, (m − 1/n)/(1 − 1/n); for a score of n
// levels whose most likely level is k, max(0, 1 − Σ pᵢ·|i − k| / D),
// where D = (1/n)·Σ|i − (n−1)/2| is the same spread for a uniform
// distribution; 1 for a single option; none for a noul.
//
// The fields beyond System One's are on the wire with the prefix x_:
// EntropyConfidence (x_entropy_confidence), on every type, is 1 minus the
// entropy of the probabilities divided by its maximum, log n: 1 for a
// certain answer, 0 for a uniform one. OptionMass (x_option_mass) is the
// share of the model's next-token probability that fell on the options'
// labels at all (absent for models that do not predict tokens): a low
// value means the model wanted to say something else.
type Answer struct {
	Type              string                     `json:"type"`
	Noul              *float64                   `json:"noul,omitzero"`
	Choice            string                     `json:"choice,omitzero"`
	Score             *float64                   `json:"score,omitzero"`
	Legend            map[string]json.RawMessage `json:"legend,omitzero"`
	Probabilities     map[string]float64         `json:"probabilities,omitzero"`
	Confidence        *float64                   `json:"confidence,omitzero"`
	EntropyConfidence float64                    `json:"x_entropy_confidence"`
	OptionMass        *float64                   `json:"x_option_mass,omitzero"`
}

// MarshalJSON writes the fields of a's type: a choice's choice even when
// the option's name is empty.
func (a Answer) MarshalJSON() ([]byte, error) {
	var choice *string
	if a.Type == TypeChoice {
		choice = &a.Choice
	}
	return json.Marshal(struct {
		Type              string                     `json:"type"`
		Noul              *float64                   `json:"noul,omitzero"`
		Choice            *string                    `json:"choice,omitzero"`
		Score             *float64                   `json:"score,omitzero"`
		Legend            map[string]json.RawMessage `json:"legend,omitzero"`
		Probabilities     map[string]float64         `json:"probabilities,omitzero"`
		Confidence        *float64                   `json:"confidence,omitzero"`
		EntropyConfidence float64                    `json:"x_entropy_confidence"`
		OptionMass        *float64                   `json:"x_option_mass,omitzero"`
	}{a.Type, a.Noul, choice, a.Score, a.Legend, a.Probabilities, a.Confidence, a.EntropyConfidence, a.OptionMass})
}

// distribution turns the log-probabilities of a question's options into
// probabilities at temperature t: a softmax over the options only. When
// no option has a finite log-probability, it is uniform.
func distribution(logp []float64, t float64) []float64 {
	hi := math.Inf(-1)
	for _, l := range logp {
		if !math.IsNaN(l) {
			hi = max(hi, l/t)
		}
	}
	p := make([]float64, len(logp))
	if math.IsInf(hi, 0) {
		for i := range p {
			p[i] = 1 / float64(len(p))
		}
		return p
	}
	var sum float64
	for i, l := range logp {
		if !math.IsNaN(l) {
			p[i] = math.Exp(l/t - hi)
		}
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// entropyConfidence is 1 - H(p)/log(len(p)).
func entropyConfidence(p []float64) float64 {
	if len(p) < 2 {
		return 1
	}
	var h float64
	for _, x := range p {
		if x > 0 {
			h -= x * math.Log(x)
		}
	}
	return unit(1 - h/math.Log(float64(len(p))))
}

// choiceConfidence is (m − 1/n)/(1 − 1/n) for the largest probability m
// of n.
func choiceConfidence(p []float64) float64 {
	n := float64(len(p))
	if len(p) < 2 {
		return 1
	}
	return unit((slices.Max(p) - 1/n) / (1 - 1/n))
}

// scoreConfidence is max(0, 1 − Σ pᵢ·|i − k| / D) for the most likely
// level k, D = (1/n)·Σ|i − (n−1)/2|.
func scoreConfidence(p []float64) float64 {
	n := len(p)
	if n < 2 {
		return 1
	}
	k := argmax(p)
	var spread, d float64
	for i, x := range p {
		spread += x * math.Abs(float64(i-k))
		d += math.Abs(float64(i) - float64(n-1)/2)
	}
	return unit(1 - spread/(d/float64(n)))
}

// unit is x within [0, 1], and 0 for NaN.
func unit(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return max(0, min(1, x))
}

// argmax is the index of the largest of p, the first on a tie.
func argmax(p []float64) int {
	best := 0
	for i := range p {
		if p[i] > p[best] {
			best = i
		}
	}
	return best
}

// answer builds the answer to q from its options' probabilities p (in the
// order of q's options, levels, or yes then no), and the option mass
// (negative: unknown).
func answer(q Question, p []float64, mass float64) Answer {
	a := Answer{Type: q.Type, EntropyConfidence: entropyConfidence(p)}
	if mass >= 0 {
		m := unit(mass)
		a.OptionMass = &m
	}
	switch q.Type {
	case TypeNoul:
		yes := unit(p[0])
		a.Noul = &yes
	case TypeChoice:
		a.Probabilities = map[string]float64{}
		for i, o := range q.Options {
			a.Probabilities[o.Name] = p[i]
		}
		a.Choice = q.Options[argmax(p)].Name
		c := choiceConfidence(p)
		a.Confidence = &c
	case TypeScore:
		a.Probabilities = map[string]float64{}
		a.Legend = map[string]json.RawMessage{}
		var mean float64
		for i, l := range q.Labels {
			k := strconv.Itoa(i)
			a.Probabilities[k] = p[i]
			if len(q.legend) == len(q.Labels) {
				a.Legend[k] = q.legend[i]
			} else {
				a.Legend[k], _ = json.Marshal(l)
			}
			mean += float64(i) * p[i]
		}
		a.Score = &mean
		c := scoreConfidence(p)
		a.Confidence = &c
	}
	return a
}
