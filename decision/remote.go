package decision

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/inferkit/inferkit/inference"
)

// Generator is what an Evaluator needs of an engine to run a model that
// an upstream serves (inference.ModelInfo.Backend is
// inference.RemoteBackend, catalog.Model.Remote), which scores no
// branches; [*inference.Engine] implements it. Each question is then a
// chat request of its own whose answer is one token: its
// TopLogprobs (inference.MaxTopLogprobs) most likely first tokens, as the
// upstream reports them, give the options' probabilities.
//
// An option whose label is not among them gets the probability of the
// least likely one listed, an upper bound, and is not counted in the
// answer's OptionMass; so a question may have at most
// inference.MaxTopLogprobs options, and is refused by name past that.
// Where every label is listed, the answer is the one the same model
// gives in process, to within float rounding and the upstream's
// rounding of log-probabilities.
type Generator interface {
	// Generate runs a chat request to its end.
	Generate(ctx context.Context, req inference.Request) (inference.Result, error)
	// CountTokens counts (for a remote model: estimates) a request's
	// prompt tokens.
	CountTokens(req inference.Request) (int, error)
	// Models describes the engine's models.
	Models() []inference.ModelInfo
}

// remoteQuestions is how many questions of one request an Evaluator asks
// a remote model at once.
const remoteQuestions = 8

// remoteLetters and remoteDigits label a remote model's options: one
// character each, which every tokenizer writes as one token.
const (
	remoteLetters = "ABCDEFGHIJKLMNOPQRST"
	remoteDigits  = "123456789"
)

// remoteModel returns the engine as a Generator when cfg.Model is one of
// its remote models.
func remoteModel(cfg Config) (Generator, bool) {
	g, ok := cfg.Engine.(Generator)
	if !ok {
		return nil, false
	}
	info, ok := infoOf(g.Models(), cfg.Model)
	return g, ok && info.Backend == inference.RemoteBackend
}

// remoteLabels are the labels of q's options on a remote model: Yes and
// No, digits for a score of up to 9 levels, letters up to
// inference.MaxTopLogprobs options.
func remoteLabels(name string, q Question) ([]string, error) {
	n := len(q.Options)
	switch q.Type {
	case TypeNoul:
		return []string{"Yes", "No"}, nil
	case TypeScore:
		n = len(q.Labels)
		if n <= len(remoteDigits) {
			return strings.Split(remoteDigits[:n], ""), nil
		}
	}
	if n > len(remoteLetters) {
		field := "options"
		if q.Type == TypeScore {
			field = "labels"
		}
		return nil, invalid(at("questions", name, field), "has %d options: the model runs on a remote engine, whose answers list their %d most likely tokens, so a question may have at most %d options",
			n, inference.MaxTopLogprobs, len(remoteLetters))
	}
	return strings.Split(remoteLetters[:n], ""), nil
}

// remoteRequest is the chat request that asks question q of a state.
func (e *Evaluator) remoteRequest(state string, q Question, labels []string) inference.Request {
	zero := 0.0
	return inference.Request{
		Model: e.cfg.Model, MaxTokens: 1, Temperature: &zero, NoThinking: true,
		Logprobs: true, TopLogprobs: inference.MaxTopLogprobs,
		Messages: []inference.Message{
			inference.Text(inference.RoleSystem, systemPrompt),
			inference.Text(inference.RoleUser, "<state>\n"+state+"\n</state>\n\n"+questionText(q, labels)),
		},
	}
}

// prepareRemote checks the questions of req against a remote model's
// bounds and estimates its prompts.
func (e *Evaluator) prepareRemote(g Generator, p *Prepared) error {
	for _, name := range p.names {
		q := p.Request.Questions[name]
		labels, err := remoteLabels(name, q)
		if err != nil {
			return err
		}
		n, err := g.CountTokens(e.remoteRequest(p.Request.State, q, labels))
		if err != nil {
			return fmt.Errorf("decision: %w", err)
		}
		p.InputTokens += n
	}
	return nil
}

// runRemote asks each question of p of a remote model, a few at once.
func (e *Evaluator) runRemote(ctx context.Context, g Generator, p *Prepared) (Response, error) {
	req := p.Request
	out := Response{Model: req.Model, Answers: map[string]Answer{}}
	answers := make([]Answer, len(p.names))
	usage := make([]int, len(p.names))
	errs := make([]error, len(p.names))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, remoteQuestions)
	var wg sync.WaitGroup
	for i, name := range p.names {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			q := req.Questions[name]
			labels, err := remoteLabels(name, q)
			if err == nil {
				var res inference.Result
				if res, err = g.Generate(ctx, e.remoteRequest(req.State, q, labels)); err == nil {
					logp, mass, ok := labelLogprobs(res, labels)
					if !ok {
						err = fmt.Errorf("decision: question %q: the upstream listed no log-probabilities", name)
					} else {
						answers[i], usage[i] = answer(q, distribution(logp, e.cfg.Temperature), unit(mass)), res.Usage.PromptTokens
					}
				}
			}
			if err != nil {
				errs[i] = err
				cancel()
			}
		})
	}
	wg.Wait()
	for i, name := range p.names {
		if errs[i] != nil {
			if _, ok := errs[i].(*Error); ok {
				return Response{}, errs[i]
			}
			return Response{}, fmt.Errorf("decision: %w", errs[i])
		}
		out.Answers[name] = answers[i]
		out.Usage.InputTokens += usage[i]
	}
	return out, nil
}

// labelLogprobs reads the labels' log-probabilities off the first answer
// token's most likely tokens. A listed token stands for a label when its
// text, spaces around aside, begins that label and no other ("Y" and
// "Yes" for Yes, "A" for A): a label's probability is the sum of its
// tokens'. A label none stands for gets the least likely listed token's.
// mass is the probability of the labels listed.
func labelLogprobs(res inference.Result, labels []string) (logp []float64, mass float64, ok bool) {
	if len(res.Logprobs) == 0 || len(res.Logprobs[0].Top) == 0 {
		return nil, 0, false
	}
	p := make([]float64, len(labels))
	floor := 0.0
	for _, t := range res.Logprobs[0].Top {
		floor = min(floor, t.Logprob)
		if i := labelOf(strings.TrimSpace(string(t.Bytes)), labels); i >= 0 {
			p[i] += math.Exp(t.Logprob)
		}
	}
	logp = make([]float64, len(labels))
	for i, pi := range p {
		mass += pi
		if pi == 0 {
			logp[i] = floor
		} else {
			logp[i] = math.Log(pi)
		}
	}
	return logp, mass, true
}

// labelOf is the index of the one label that text begins, or -1.
func labelOf(text string, labels []string) int {
	found := -1
	if text == "" {
		return found
	}
	for i, l := range labels {
		if strings.HasPrefix(l, text) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}
