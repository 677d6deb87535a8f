package decision

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/inferkit/inferkit/inference"
)

// Engine is what an Evaluator needs of an inference engine;
// [*inference.Engine] implements it. Its methods are called concurrently.
type Engine interface {
	// PrepareScore checks and tokenizes a prefix and its branches,
	// decoding nothing.
	PrepareScore(req inference.ScoreRequest) (*inference.PreparedScore, error)
	// RunScore decodes a prepared prefix once and every branch after it,
	// and returns the probabilities of each branch's candidate next
	// tokens.
	RunScore(ctx context.Context, p *inference.PreparedScore) (inference.ScoreResult, error)
	// Tokenize returns the tokens of text inside a prompt.
	Tokenize(model, text string) ([]int, error)
	// RenderPrompt renders a request's messages with the chat template.
	RenderPrompt(req inference.Request) (string, error)
}

// Config configures an Evaluator. Engine and Model are required.
type Config struct {
	// Engine runs the model.
	Engine Engine
	// Model is the engine's id of a generative (chat) model, or of an
	// encoder (a reranker or classifier: see Ranker).
	Model string
	// Temperature calibrates the model's probabilities: the options'
	// log-probabilities are divided by it before the softmax. Above 1
	// flattens an overconfident model, below 1 sharpens. 0 means 1.
	Temperature float64
	// Images says the model reads images (inference.ModelInfo.Images):
	// without it, a request with images fails as a 400 naming "images".
	// An encoder model reads text only.
	Images bool
}

// Evaluator answers decision requests with one model. It is safe for
// concurrent use and holds nothing to close: the caller owns the Engine.
type Evaluator struct {
	cfg Config
	// ranker is set when Model is an encoder of the engine.
	ranker Ranker

	// labels: the tokens of the label pools, found once.
	once    sync.Once
	pools   labelPools
	poolErr error
}

// New validates cfg.
func New(cfg Config) (*Evaluator, error) {
	switch {
	case cfg.Engine == nil:
		return nil, errors.New("decision: Config.Engine is nil")
	case cfg.Model == "":
		return nil, errors.New("decision: Config.Model is empty")
	case cfg.Temperature < 0 || math.IsNaN(cfg.Temperature) || math.IsInf(cfg.Temperature, 0):
		return nil, fmt.Errorf("decision: Config.Temperature is %v", cfg.Temperature)
	}
	if cfg.Temperature == 0 {
		cfg.Temperature = 1
	}
	ev := &Evaluator{cfg: cfg}
	if r, ok := encoderModel(cfg); ok {
		if cfg.Images {
			return nil, fmt.Errorf("decision: model %q is an encoder, which reads no images", cfg.Model)
		}
		ev.ranker = r
	}
	return ev, nil
}

// Evaluate answers every question of req over its state in one Score call
// of the engine (with an encoder model: Rank calls, each (state, option)
// pair one sequence, see Ranker): Prepare, then Run. An invalid request
// fails with an *Error before any work; engine errors
// (inference.ErrContextLength, ErrOverloaded, ...) are wrapped.
func (e *Evaluator) Evaluate(ctx context.Context, req Request) (Response, error) {
	p, err := e.Prepare(req)
	if err != nil {
		return Response{}, err
	}
	return e.Run(ctx, p)
}

// Prepared is a decision request that Evaluator.Prepare has checked,
// framed and tokenized: admission control reads its count before any
// decoding, and Run decodes what was counted. It holds no resources; run
// it at most once, with the Evaluator that prepared it.
type Prepared struct {
	// Request is the request, as given to Prepare.
	Request Request
	// InputTokens is the number of tokens the model reads: the state and
	// every question as the prompt frames them. Images add their tokens
	// when they are encoded, at Run. For an encoder model it is the
	// state's tokens and 64 per question, an estimate.
	InputTokens int

	names []string
	score *inference.PreparedScore // nil for an encoder model
}

// encoderQuestionTokens is the estimate per question of an encoder's
// Prepared, where the state is read once per option.
const encoderQuestionTokens = 64

// Prepare checks req, frames its prompt and tokenizes it, decoding
// nothing. An invalid request fails with an *Error.
func (e *Evaluator) Prepare(req Request) (*Prepared, error) {
	if err := req.Validate(e.cfg.Images); err != nil {
		return nil, err
	}
	p := &Prepared{Request: req, names: sortedNames(req.Questions)}
	if e.ranker != nil {
		state, err := e.cfg.Engine.Tokenize(e.cfg.Model, inference.Literal(req.State))
		if err != nil {
			return nil, fmt.Errorf("decision: %w", err)
		}
		p.InputTokens = len(state) + encoderQuestionTokens*len(req.Questions)
		return p, nil
	}
	e.once.Do(func() { e.pools, e.poolErr = e.findLabels() })
	if e.poolErr != nil {
		return nil, e.poolErr
	}
	prefix, suffix, err := e.frame(req.State, len(req.Images))
	if err != nil {
		return nil, err
	}
	sreq := inference.ScoreRequest{Model: e.cfg.Model, Prefix: prefix}
	for _, im := range req.Images {
		sreq.Images = append(sreq.Images, im.Data)
	}
	for _, name := range p.names {
		q := req.Questions[name]
		labels, tokens, err := e.pools.labelsFor(q)
		if err != nil {
			return nil, invalid(at("questions", name, "criteria"), "%v", err)
		}
		sreq.Branches = append(sreq.Branches, inference.Branch{Text: questionText(q, labels) + suffix, Candidates: tokens})
	}
	if p.score, err = e.cfg.Engine.PrepareScore(sreq); err != nil {
		return nil, engineError(err)
	}
	p.InputTokens = p.score.InputTokens
	return p, nil
}

// Run answers a prepared request.
func (e *Evaluator) Run(ctx context.Context, p *Prepared) (Response, error) {
	req := p.Request
	if e.ranker != nil {
		return e.rank(ctx, e.ranker, req)
	}
	if p.score == nil {
		return Response{}, errors.New("decision: a Prepared not made by this Evaluator's Prepare")
	}
	res, err := e.cfg.Engine.RunScore(ctx, p.score)
	if err != nil {
		return Response{}, engineError(err)
	}
	out := Response{Model: req.Model, Answers: map[string]Answer{}, Usage: Usage{InputTokens: res.Usage.PromptTokens}}
	for i, name := range p.names {
		b := res.Branches[i]
		var mass float64
		for _, p := range b.Probabilities {
			mass += p
		}
		out.Answers[name] = answer(req.Questions[name], distribution(b.LogProbs, e.cfg.Temperature), mass)
	}
	return out, nil
}

// engineError is err as a decision error: an image the model cannot read
// names it, the rest is wrapped.
func engineError(err error) error {
	if ie, ok := errors.AsType[*inference.ImageError](err); ok {
		return invalid(at("images", ie.Index), "%s", ie.Reason)
	}
	return fmt.Errorf("decision: %w", err)
}

// sentinel marks where the questions go in the rendered chat: the text
// before it is the prefix, shared by every question.
const sentinel = "\uE000question\uE000"

// systemPrompt frames the task for the model.
const systemPrompt = "You evaluate a state and answer one question about it. Reply with the label of one option only, and nothing else."

// frame renders the chat around the state, after its images, and splits it
// where the question goes: the prefix (the images and the state) and what
// follows the question (the end of the user turn and the start of the
// answer).
func (e *Evaluator) frame(state string, images int) (prefix, suffix string, err error) {
	var user strings.Builder
	for i := range images {
		fmt.Fprintf(&user, "Image %d: %s\n", i+1, inference.ImageMarker)
	}
	if images > 0 {
		user.WriteByte('\n')
	}
	user.WriteString("<state>\n" + state + "\n</state>\n\n" + sentinel)
	text, err := e.cfg.Engine.RenderPrompt(inference.Request{
		Model:      e.cfg.Model,
		NoThinking: true,
		Messages: []inference.Message{
			inference.Text(inference.RoleSystem, systemPrompt),
			inference.Text(inference.RoleUser, user.String()),
		},
	})
	if err != nil {
		return "", "", fmt.Errorf("decision: %w", err)
	}
	prefix, suffix, ok := strings.Cut(text, sentinel)
	if !ok {
		return "", "", fmt.Errorf("decision: the chat template of %q drops the question", e.cfg.Model)
	}
	return prefix, suffix, nil
}

// questionText is a question as the prompt shows it, its options under
// their labels. The request's text in it is data (inference.Literal): its
// control-token text stays text.
func questionText(q Question, labels []string) string {
	var b strings.Builder
	b.WriteString("Question: ")
	switch q.Type {
	case TypeNoul:
		b.WriteString(orDefault(q.Instructions, "Is the statement true of the state?"))
		fmt.Fprintf(&b, "\nAnswer %s for yes or %s for no.", labels[0], labels[1])
	case TypeChoice:
		b.WriteString(orDefault(q.Instructions, "Which option fits the state best?"))
		b.WriteString("\nOptions:\n")
		for i, o := range q.Options {
			fmt.Fprintf(&b, "%s. %s", labels[i], inference.Literal(o.Name))
			if o.Description != "" {
				b.WriteString(": " + inference.Literal(o.Description))
			}
			b.WriteByte('\n')
		}
		b.WriteString("Answer with the label of one option.")
	case TypeScore:
		b.WriteString(orDefault(q.Instructions, "Rate the state on this scale."))
		b.WriteString("\nScale, from lowest to highest:\n")
		for i, l := range q.Labels {
			fmt.Fprintf(&b, "%s. %s\n", labels[i], inference.Literal(l))
		}
		b.WriteString("Answer with the label of one level.")
	}
	return b.String()
}

// orDefault returns the request's text s as data, or def when s is blank.
func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return inference.Literal(s)
}

// labelPools are the labels usable as answers, each a single token of the
// model's vocabulary: letters for choices, digits from 1 for short scales,
// a yes/no pair.
type labelPools struct {
	letters, digits []label
	yesNo           [2]label
}

type label struct {
	text  string
	token int
}

// findLabels tokenizes the candidate labels and keeps those that are one
// token.
func (e *Evaluator) findLabels() (labelPools, error) {
	var lp labelPools
	single := func(s string) (label, bool) {
		toks, err := e.cfg.Engine.Tokenize(e.cfg.Model, s)
		if err != nil || len(toks) != 1 {
			return label{}, false
		}
		return label{s, toks[0]}, true
	}
	seen := map[int]bool{}
	add := func(pool *[]label, s string) {
		if l, ok := single(s); ok && !seen[l.token] {
			seen[l.token] = true
			*pool = append(*pool, l)
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		add(&lp.letters, string(c))
	}
	for c := 'a'; c <= 'z'; c++ {
		add(&lp.letters, string(c))
	}
	clear(seen)
	for c := '1'; c <= '9'; c++ {
		add(&lp.digits, string(c))
	}
	found := false
	for _, pair := range [][2]string{{"Yes", "No"}, {"yes", "no"}, {"Y", "N"}} {
		y, ok1 := single(pair[0])
		n, ok2 := single(pair[1])
		if ok1 && ok2 && y.token != n.token {
			lp.yesNo, found = [2]label{y, n}, true
			break
		}
	}
	if !found && len(lp.letters) < 2 {
		return lp, fmt.Errorf("decision: model %q has no single-token labels", e.cfg.Model)
	}
	if !found {
		lp.yesNo = [2]label{lp.letters[0], lp.letters[1]}
	}
	return lp, nil
}

// labelsFor picks the labels of q's options and their tokens.
func (lp labelPools) labelsFor(q Question) ([]string, []int, error) {
	var pool []label
	n := 2
	switch q.Type {
	case TypeNoul:
		pool = lp.yesNo[:]
	case TypeChoice:
		pool, n = lp.letters, len(q.Options)
	case TypeScore:
		n = len(q.Labels)
		pool = lp.digits
		if n > len(pool) {
			pool = lp.letters
		}
	}
	if n > len(pool) {
		return nil, nil, errors.New("has " + strconv.Itoa(n) + " options, more than this model has single-token labels for")
	}
	texts, toks := make([]string, n), make([]int, n)
	for i, l := range pool[:n] {
		texts[i], toks[i] = l.text, l.token
	}
	return texts, toks, nil
}
