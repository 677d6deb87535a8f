package wire

import (
	"slices"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
)

// Sampling holds the sampling parameters the styles share, as a request
// sent them (nil or empty when absent). Each style fills in those it
// has; the zero value sets only the defaults.
type Sampling struct {
	Temperature, TopP, MinP         *float64
	TopK                            *int
	Seed                            *int64
	Frequency, Presence, Repetition *float64
	Stop                            []string
	// StopParam is the style's name of Stop, such as "stop" or
	// "stop_sequences", for its errors.
	StopParam string
}

// Set validates p and sets the sampling fields of out, with the style's
// defaults of temperature and top_p. It fails with a *formats.RequestError
// naming the parameter out of range.
func (p Sampling) Set(out *formats.Request, temperature, topP float64) error {
	for _, c := range []error{
		CheckRange("temperature", p.Temperature, 0, 2),
		CheckRange("top_p", p.TopP, 0, 1),
		CheckRange("min_p", p.MinP, 0, 1),
		CheckMin("top_k", p.TopK, 0),
		CheckRange("frequency_penalty", p.Frequency, -2, 2),
		CheckRange("presence_penalty", p.Presence, -2, 2),
		CheckRange("repetition_penalty", p.Repetition, 0, 2),
		CheckStops(p.StopParam, p.Stop),
	} {
		if c != nil {
			return c
		}
	}
	out.Temperature = ptr(temperature)
	if p.Temperature != nil {
		out.Temperature = ptr(*p.Temperature)
	}
	out.TopP = ptr(topP)
	if p.TopP != nil {
		out.TopP = ptr(*p.TopP)
	}
	out.TopK, out.MinP, out.Seed = p.TopK, p.MinP, p.Seed
	if p.Frequency != nil {
		out.FrequencyPenalty = *p.Frequency
	}
	if p.Presence != nil {
		out.PresencePenalty = *p.Presence
	}
	if p.Repetition != nil {
		out.RepetitionPenalty = *p.Repetition
	}
	if len(p.Stop) > 0 {
		out.Stop = slices.Clone(p.Stop)
	}
	return nil
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// Penalties returns the penalties of r as a request writes them: nil
// for those that are off (0, or a repetition penalty of 1).
func Penalties(r inference.Request) (frequency, presence, repetition *float64) {
	if r.FrequencyPenalty != 0 {
		frequency = ptr(r.FrequencyPenalty)
	}
	if r.PresencePenalty != 0 {
		presence = ptr(r.PresencePenalty)
	}
	if r.RepetitionPenalty != 0 && r.RepetitionPenalty != 1 {
		repetition = ptr(r.RepetitionPenalty)
	}
	return frequency, presence, repetition
}
