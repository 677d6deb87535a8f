package completions

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
)

// MaxPrompts is the most prompts one legacy completions request may hold;
// its prompts times n is at most inference.MaxChoices, so that one request
// holds at most as many results, with their log-probabilities, as a chat
// request may.
const MaxPrompts = 16

// MaxLogprobs is the most alternatives the legacy logprobs asks for
// at each token, as OpenAI bounds it.
const MaxLogprobs = 5

// Request is the body of POST /v1/completions, OpenAI's legacy
// text completion: the prompt is continued as it is, with no chat
// template. Fields it does not list are ignored, as in the other styles;
// suffix, best_of other than n and logit_bias are refused, since no model
// here fills in the middle, ranks candidates or biases logits.
type Request struct {
	Model  string  `json:"model"`
	Prompt Prompts `json:"prompt"`
	// MaxTokens bounds each choice's tokens; default 16, as OpenAI's. 0
	// generates nothing: with echo and logprobs, it scores the prompt.
	MaxTokens     *int           `json:"max_tokens,omitzero"`
	Temperature   *float64       `json:"temperature,omitzero"`
	TopP          *float64       `json:"top_p,omitzero"`
	TopK          *int           `json:"top_k,omitzero"`
	MinP          *float64       `json:"min_p,omitzero"`
	N             *int           `json:"n,omitzero"`
	Stream        bool           `json:"stream,omitzero"`
	StreamOptions *StreamOptions `json:"stream_options,omitzero"`
	// Logprobs is how many alternatives each token's entry lists, 0 to
	// 20; set, even to 0, it asks for the entries.
	Logprobs *int `json:"logprobs,omitzero"`
	// Echo puts the prompt before each choice's text (and, with
	// logprobs, its tokens before the entries).
	Echo              bool               `json:"echo,omitzero"`
	Stop              formats.Stop       `json:"stop,omitzero"`
	PresencePenalty   *float64           `json:"presence_penalty,omitzero"`
	FrequencyPenalty  *float64           `json:"frequency_penalty,omitzero"`
	RepetitionPenalty *float64           `json:"repetition_penalty,omitzero"`
	Seed              *int64             `json:"seed,omitzero"`
	Suffix            *string            `json:"suffix,omitzero"`
	BestOf            *int               `json:"best_of,omitzero"`
	LogitBias         map[string]float64 `json:"logit_bias,omitzero"`
	User              string             `json:"user,omitzero"`
}

// StreamOptions are the options of a stream.
type StreamOptions struct {
	// IncludeUsage adds a last chunk with empty choices and the usage.
	IncludeUsage bool `json:"include_usage,omitzero"`
}

// Prompts is a prompt: a string or an array of strings. Token
// arrays are refused: a client's token ids are another tokenizer's.
type Prompts []string

// UnmarshalJSON accepts a string or an array of strings.
func (p *Prompts) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*p = Prompts{one}
		return nil
	}
	var many []json.RawMessage
	if err := json.Unmarshal(data, &many); err != nil {
		return formats.TypeError("prompt", formats.JSONKind(data), "string or array of strings")
	}
	out := make(Prompts, len(many))
	for i, raw := range many {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return &formats.RequestError{Param: fmt.Sprintf("prompt[%d]", i), Code: "invalid_type",
				Message: fmt.Sprintf("prompt[%d] must be a string: prompts of token ids are not supported, send text", i)}
		}
	}
	*p = out
	return nil
}

// Parse decodes and validates a legacy completions body, failing with a
// *formats.RequestError that names the parameter. The hub request's
// Prompts hold the prompts; its Prompt is empty until a caller runs one
// (ForPrompt).
func Parse(body []byte) (formats.Request, error) {
	var r Request
	if err := formats.Decode(body, &r); err != nil {
		return formats.Request{}, err
	}
	return r.Canonical()
}

// Canonical validates r and returns the hub's request with OpenAI's
// defaults: 16 new tokens, temperature 1, top_p 1.
func (r *Request) Canonical() (formats.Request, error) {
	out := formats.Request{Request: inference.Request{Model: r.Model}}
	switch {
	case r.Model == "":
		return formats.Request{}, formats.Missing("model")
	case r.Prompt == nil:
		return formats.Request{}, formats.Missing("prompt")
	case len(r.Prompt) == 0:
		return formats.Request{}, formats.Invalid("prompt", "prompt must hold at least one string")
	case len(r.Prompt) > MaxPrompts:
		return formats.Request{}, formats.Invalid("prompt", "prompt holds %d strings, at most %d", len(r.Prompt), MaxPrompts)
	case r.Suffix != nil && *r.Suffix != "":
		return formats.Request{}, formats.Invalid("suffix", "suffix is not supported: the models here do not fill in the middle")
	case len(r.LogitBias) > 0:
		return formats.Request{}, formats.Invalid("logit_bias", "logit_bias is not supported")
	}
	for i, p := range r.Prompt {
		if p == "" {
			return formats.Request{}, formats.Invalid(fmt.Sprintf("prompt[%d]", i), "prompt[%d] is empty", i)
		}
	}
	out.Prompts = []string(r.Prompt)
	out.MaxTokens = 16
	if r.MaxTokens != nil {
		if *r.MaxTokens < 0 {
			return formats.Request{}, formats.Invalid("max_tokens", "max_tokens must be 0 or more, got %d", *r.MaxTokens)
		}
		out.MaxTokens = *r.MaxTokens
	}
	if out.MaxTokens == 0 {
		out.PromptOnly = true
	}
	if err := (wire.Sampling{
		Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK, MinP: r.MinP, Seed: r.Seed,
		Frequency: r.FrequencyPenalty, Presence: r.PresencePenalty, Repetition: r.RepetitionPenalty,
		Stop: r.Stop, StopParam: "stop",
	}).Set(&out, 1, 1); err != nil {
		return formats.Request{}, err
	}
	n := 1
	if r.N != nil {
		if *r.N < 1 || *r.N > inference.MaxChoices {
			return formats.Request{}, formats.Invalid("n", "n must be 1 to %d, got %d", inference.MaxChoices, *r.N)
		}
		n = *r.N
	}
	if len(r.Prompt)*n > inference.MaxChoices {
		return formats.Request{}, formats.Invalid("n", "n: %d prompts of %d choices each are %d completions, at most %d", len(r.Prompt), n, len(r.Prompt)*n, inference.MaxChoices)
	}
	if r.BestOf != nil && *r.BestOf != n {
		return formats.Request{}, formats.Invalid("best_of", "best_of must equal n (%d): candidates are not ranked here", n)
	}
	if n > 1 {
		out.Choices = n
	}
	if r.Logprobs != nil {
		if *r.Logprobs > MaxLogprobs {
			return formats.Request{}, formats.Invalid("logprobs", "logprobs must be 0 to %d, got %d", MaxLogprobs, *r.Logprobs)
		}
		if err := out.SetLogprobs(ptr(true), r.Logprobs, "logprobs"); err != nil {
			return formats.Request{}, err
		}
	}
	out.Echo = r.Echo
	out.PromptLogprobs = r.Echo && out.Logprobs
	if out.PromptOnly {
		out.Logprobs = false // nothing is generated
	}
	out.Stream = r.Stream
	out.IncludeUsage = r.StreamOptions != nil && r.StreamOptions.IncludeUsage
	out.User = r.User
	return out, nil
}

// ForPrompt returns the engine's request for prompt i of req, a legacy
// completions request from Parse: the text continued as it is, as data
// (never read as control tokens), with no chat template and no thinking
// switch.
func ForPrompt(req formats.Request, i int) inference.Request {
	out := req.Request
	out.Prompt = inference.Literal(req.Prompts[i])
	return out
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// Response is the response of a legacy completions request.
type Response struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"` // text_completion
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	// Usage is on the response, and on a stream's last chunk when asked.
	Usage *Usage `json:"usage,omitzero"`
}

// Choice is one choice: choice j of prompt i has index i*n+j.
type Choice struct {
	Text     string    `json:"text"`
	Index    int       `json:"index"`
	Logprobs *Logprobs `json:"logprobs"`
	// FinishReason is stop or length; null in a stream until the last
	// chunk of the choice.
	FinishReason *string `json:"finish_reason"`
}

// Logprobs are the legacy shape of log-probabilities: parallel
// arrays of tokens, their log-probabilities (null for the first token of
// an echoed prompt, which nothing predicts, and whose map of alternatives
// is empty), a map of the alternatives at each token, and each token's
// byte offset in the choice's text.
type Logprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// Usage counts a request's tokens: every prompt's, and every
// choice's generated tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func newUsage(u inference.Usage) *Usage {
	return &Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
}

// emptyLogprobs is a logprobs object with no tokens, its arrays
// empty rather than null.
func emptyLogprobs() *Logprobs {
	return &Logprobs{Tokens: []string{}, TokenLogprobs: []*float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
}

// add appends the entries of lps to l, offsets counted from offset, and
// returns the offset after them. For a prompt's entries, those whose
// token writes no text at its start (a BOS token) are left out, and the
// first token's log-probability, which nothing predicts, is null.
func (l *Logprobs) add(lps []inference.TokenLogprob, offset int, prompt bool) int {
	for i, lp := range lps {
		if prompt && len(l.Tokens) == 0 && len(lp.Bytes) == 0 {
			continue
		}
		l.Tokens = append(l.Tokens, wire.TokenText(lp.Bytes))
		if prompt && i == 0 {
			// No alternatives either: an empty object, which every SDK
			// decodes (the Go SDK drops an array of objects holding null).
			l.TokenLogprobs = append(l.TokenLogprobs, nil)
			l.TopLogprobs = append(l.TopLogprobs, map[string]float64{})
		} else {
			l.TokenLogprobs = append(l.TokenLogprobs, ptr(lp.Logprob))
			top := make(map[string]float64, len(lp.Top))
			for _, t := range lp.Top {
				if _, dup := top[wire.TokenText(t.Bytes)]; !dup {
					top[wire.TokenText(t.Bytes)] = t.Logprob
				}
			}
			l.TopLogprobs = append(l.TopLogprobs, top)
		}
		l.TextOffset = append(l.TextOffset, offset)
		offset += len(lp.Bytes)
	}
	return offset
}

// choice returns choice index of prompt's result res.
func choice(req formats.Request, index int, prompt string, res inference.Result) Choice {
	finish := "stop"
	if res.FinishReason == inference.FinishLength {
		finish = "length"
	}
	c := Choice{Text: res.Text, Index: index, FinishReason: &finish}
	if req.Echo {
		c.Text = prompt + res.Text
	}
	if req.Logprobs || req.PromptLogprobs {
		l := emptyLogprobs()
		offset := 0
		if req.Echo {
			l.add(res.PromptLogprobs, 0, true)
			offset = len(prompt)
		}
		l.add(res.Logprobs, offset, false)
		c.Logprobs = l
	}
	return c
}

// NewResponse returns the response to a legacy completions request:
// results[i][j] is choice j of prompt i.
func NewResponse(req formats.Request, results [][]inference.Result, o formats.Options) Response {
	c := Response{ID: o.ID("cmpl-"), Object: "text_completion", Created: o.Time().Unix(), Model: req.Model, Choices: []Choice{}}
	var all []inference.Result
	for i, choices := range results {
		for j, res := range choices {
			c.Choices = append(c.Choices, choice(req, i*len(choices)+j, req.Prompts[i], res))
		}
		all = append(all, choices...)
	}
	c.Usage = newUsage(inference.ChoicesUsage(all, max(1, req.Choices)))
	return c
}

// Stream encodes the events of a legacy completions request as
// OpenAI streams them: a chunk per text piece of a choice (the event's
// Choice is the index i*n+j), a last chunk per choice with its finish
// reason, then the usage chunk when asked, and data: [DONE]. An echoed
// prompt is the first piece of its choices. Not safe for concurrent use.
type Stream struct {
	w       io.Writer
	req     formats.Request
	id      string
	created int64
	choices []wire.Progress
	sent    []int // each choice's bytes of text so far
	started []bool
	results []inference.Result // each choice's, as it ends
	ended   int
	done    bool
}

// NewStream returns an encoder writing to w for req.
func NewStream(w io.Writer, req formats.Request, o formats.Options) *Stream {
	n := len(req.Prompts) * max(1, req.Choices)
	return &Stream{w: w, req: req, id: o.ID("cmpl-"), created: o.Time().Unix(), choices: make([]wire.Progress, n), started: make([]bool, n),
		sent: make([]int, n), results: make([]inference.Result, n)}
}

func (s *Stream) chunk(c Choice) error {
	return formats.WriteJSONEvent(s.w, "", Response{ID: s.id, Object: "text_completion", Created: s.created, Model: s.req.Model, Choices: []Choice{c}})
}

// Event writes the chunks of one event. A Final event's usage adds to the
// request's: its prompt counted once per prompt, by its first choice.
func (s *Stream) Event(ev inference.Event) error {
	if s.done {
		return nil
	}
	i := ev.Choice
	if i < 0 || i >= len(s.choices) {
		return fmt.Errorf("completions: an event of choice %d in a stream of %d choices", i, len(s.choices))
	}
	n := max(1, s.req.Choices)
	prompt := s.req.Prompts[i/n]
	// The echoed prompt comes first, with its entries when asked for:
	// the engine sends them with a choice's first event.
	if !s.started[i] {
		s.started[i] = true
		if s.req.Echo {
			lps := ev.PromptLogprobs
			if ev.Final != nil && lps == nil {
				lps = ev.Final.PromptLogprobs
			}
			c := choice(s.req, i, prompt, inference.Result{PromptLogprobs: lps})
			c.FinishReason = nil
			if err := s.chunk(c); err != nil {
				return err
			}
		}
	}
	_, text, _, lps := s.choices[i].Next(ev)
	offset := s.sent[i]
	s.sent[i] += len(text)
	if text != "" || len(lps) > 0 && s.req.Logprobs {
		c := Choice{Text: text, Index: i}
		if s.req.Logprobs {
			c.Logprobs = emptyLogprobs()
			if s.req.Echo {
				offset += len(prompt)
			}
			c.Logprobs.add(lps, offset, false)
		}
		if err := s.chunk(c); err != nil {
			return err
		}
	}
	if ev.Final == nil {
		return nil
	}
	finish := choice(s.req, i, prompt, inference.Result{FinishReason: ev.Final.FinishReason}).FinishReason
	if err := s.chunk(Choice{Index: i, FinishReason: finish}); err != nil {
		return err
	}
	s.results[i] = *ev.Final
	if s.ended++; s.ended < len(s.choices) {
		return nil
	}
	s.done = true
	if s.req.IncludeUsage {
		if err := formats.WriteJSONEvent(s.w, "", Response{ID: s.id, Object: "text_completion", Created: s.created, Model: s.req.Model,
			Choices: []Choice{}, Usage: newUsage(inference.ChoicesUsage(s.results, n))}); err != nil {
			return err
		}
	}
	return formats.WriteDone(s.w)
}

// Fail writes err as the in-stream error data and ends the stream; no
// [DONE] follows.
func (s *Stream) Fail(err error) error {
	if s.done {
		return nil
	}
	s.done = true
	return formats.WriteEvent(s.w, "", chat.Error(err).Body(formats.StyleChat))
}
