package decision

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
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
// Keep one per model: it finds the model's labels once, and decodes at
// most two video clips at a time.
type Evaluator struct {
	cfg Config
	// ranker is set when Model is an encoder of the engine, gen when
	// an upstream runs it (remote.go).
	ranker Ranker
	gen    Generator

	// decoders holds a token per video clip being decoded.
	decoders chan struct{}

	// labels: the tokens of the label pools, found once.
	once    sync.Once
	pools   *labelPools
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
	ev := &Evaluator{cfg: cfg, decoders: make(chan struct{}, videoDecoders)}
	if r, ok := encoderModel(cfg); ok {
		if cfg.Images {
			return nil, fmt.Errorf("decision: model %q is an encoder, which reads no images", cfg.Model)
		}
		ev.ranker = r
	}
	if g, ok := remoteModel(cfg); ok {
		if cfg.Images {
			return nil, fmt.Errorf("decision: model %q runs on a remote engine, which is sent no images", cfg.Model)
		}
		ev.gen = g
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
	// every question as the prompt frames them. Pictures add their tokens
	// when they are encoded, at Run. For an encoder model it is the
	// state's tokens and 64 per question, an estimate.
	InputTokens int
	// Pictures is the most pictures the model reads: each image entry,
	// and up to VideoFrames frames of each video entry, sampled at Run.
	Pictures int

	names []string
	score *inference.PreparedScore // nil for an encoder model
	pics  []picture                // the pictures of score
	// videos says the score is prepared again at Run, with the frames.
	videos bool
}

// encoderQuestionTokens is the estimate per question of an encoder's
// Prepared, where the state is read once per option.
const encoderQuestionTokens = 64

// Prepare checks req, frames its prompt and tokenizes it, decoding
// nothing. An invalid request fails with an *Error. A request with video
// entries is counted without their frames, which Run samples.
func (e *Evaluator) Prepare(req Request) (*Prepared, error) {
	if err := req.Validate(e.cfg.Images); err != nil {
		return nil, err
	}
	p := &Prepared{Request: req, names: sortedNames(req.Questions)}
	if e.gen != nil {
		if err := e.prepareRemote(e.gen, p); err != nil {
			return nil, err
		}
		return p, nil
	}
	if e.ranker != nil {
		state, err := e.cfg.Engine.Tokenize(e.cfg.Model, inference.Literal(req.State))
		if err != nil {
			return nil, fmt.Errorf("decision: %w", err)
		}
		p.InputTokens = len(state) + encoderQuestionTokens*len(req.Questions)
		return p, nil
	}
	if err := e.loadLabels(); err != nil {
		return nil, err
	}
	var err error
	if p.pics, err = stillPictures(req.Images); err != nil {
		return nil, err
	}
	p.videos = len(p.pics) < len(req.Images)
	p.Pictures = len(p.pics) + VideoFrames*(len(req.Images)-len(p.pics))
	if p.score, err = e.prepareScore(req, p.names, p.pics); err != nil {
		return nil, err
	}
	p.InputTokens = p.score.InputTokens
	return p, nil
}

// prepareScore frames the prompt of req, with pics before the state and a
// branch per question in the order of names, and has the engine check and
// tokenize it.
func (e *Evaluator) prepareScore(req Request, names []string, pics []picture) (*inference.PreparedScore, error) {
	prefix, questions, err := e.prompts(req, names, pics)
	if err != nil {
		return nil, err
	}
	sreq := inference.ScoreRequest{Model: e.cfg.Model, Prefix: prefix}
	for _, pic := range pics {
		sreq.Images = append(sreq.Images, pic.data)
	}
	for _, q := range questions {
		b := inference.Branch{Text: q.text}
		for _, l := range q.labels {
			b.Candidates = append(b.Candidates, l.tokens)
		}
		sreq.Branches = append(sreq.Branches, b)
	}
	ps, err := e.cfg.Engine.PrepareScore(sreq)
	if err != nil {
		return nil, engineError(err, pics)
	}
	return ps, nil
}

// A framedQuestion is a question as the prompt shows it, after the
// prefix: its text up to the answer, and the labels of its options.
type framedQuestion struct {
	text   string
	labels []label
}

// prompts frames the prompt of req, with pics before the state: the
// prefix every question shares, and each question of names, in order.
func (e *Evaluator) prompts(req Request, names []string, pics []picture) (string, []framedQuestion, error) {
	prefix, suffix, err := e.frame(req.State, pics)
	if err != nil {
		return "", nil, err
	}
	questions := make([]framedQuestion, len(names))
	for i, name := range names {
		q := req.Questions[name]
		labels, err := e.labelsFor(e.pools, q)
		if err != nil {
			return "", nil, err
		}
		texts := make([]string, len(labels))
		for i, l := range labels {
			texts[i] = l.text
		}
		questions[i] = framedQuestion{questionText(q, texts) + suffix, labels}
	}
	return prefix, questions, nil
}

// A Prompt is one question of a request as a generative decision model
// reads it: Evaluator.Prompts returns them.
type Prompt struct {
	// Question is the question's id.
	Question string
	// Text is the prompt up to where the answer begins, as a prompt
	// text (see inference.Literal): Engine.Tokenize gives its tokens.
	Text string
	// Labels are what the model answers to pick each option, in the
	// options' order (a noul's yes, then no): the probability of an
	// option is that of its label's tokens after Text.
	Labels []string
}

// Prompts frames req as Evaluate does for a generative model and returns
// the prompt of each question, in the order of their ids, decoding
// nothing: to show what the model reads, or to train a model on the
// framing it will be asked in (scripts/train-tiny does). An invalid
// request fails with an *Error; a request with images, or an Evaluator
// of an encoder or remote model, fails with an error.
func (e *Evaluator) Prompts(req Request) ([]Prompt, error) {
	if err := req.Validate(e.cfg.Images); err != nil {
		return nil, err
	}
	if e.gen != nil || e.ranker != nil {
		return nil, fmt.Errorf("decision: model %q is not read through a prompt of its own", e.cfg.Model)
	}
	if len(req.Images) > 0 {
		return nil, errors.New("decision: Prompts frames no images")
	}
	if err := e.loadLabels(); err != nil {
		return nil, err
	}
	names := sortedNames(req.Questions)
	prefix, questions, err := e.prompts(req, names, nil)
	if err != nil {
		return nil, err
	}
	out := make([]Prompt, len(names))
	for i, q := range questions {
		out[i] = Prompt{Question: names[i], Text: prefix + q.text}
		for _, l := range q.labels {
			out[i].Labels = append(out[i].Labels, l.text)
		}
	}
	return out, nil
}

// Run answers a prepared request, first sampling the frames of its video
// entries.
func (e *Evaluator) Run(ctx context.Context, p *Prepared) (Response, error) {
	req := p.Request
	if e.gen != nil {
		return e.runRemote(ctx, e.gen, p)
	}
	if e.ranker != nil {
		return e.rank(ctx, e.ranker, req)
	}
	if p.score == nil {
		return Response{}, errors.New("decision: a Prepared not made by this Evaluator's Prepare")
	}
	score, pics := p.score, p.pics
	if p.videos {
		var err error
		if pics, err = e.allPictures(ctx, req.Images); err != nil {
			return Response{}, err
		}
		if score, err = e.prepareScore(req, p.names, pics); err != nil {
			return Response{}, err
		}
	}
	res, err := e.cfg.Engine.RunScore(ctx, score)
	if err != nil {
		return Response{}, engineError(err, pics)
	}
	out := Response{Model: req.Model, Answers: map[string]Answer{}, Usage: Usage{InputTokens: res.Usage.PromptTokens}}
	for i, name := range p.names {
		b := res.Branches[i]
		var mass float64
		for _, p := range b.Probabilities {
			mass += p
		}
		out.Answers[name] = answer(req.Questions[name], distribution(b.LogProbs, e.cfg.Temperature), unit(mass))
	}
	return out, nil
}

// engineError is err as a decision error: a picture of pics that the
// model cannot read names its entry, the rest is wrapped.
func engineError(err error, pics []picture) error {
	if ie, ok := errors.AsType[*inference.ImageError](err); ok && ie.Index >= 0 && ie.Index < len(pics) {
		return invalid(at("images", pics[ie.Index].entry), "%s", ie.Reason)
	}
	return fmt.Errorf("decision: %w", err)
}

// sentinel marks where the questions go in the rendered chat: the text
// before it is the prefix, shared by every question.
const sentinel = "\uE000question\uE000"

// systemPrompt frames the task for the model.
const systemPrompt = "You evaluate a state and answer one question about it. Reply with the label of one option only, and nothing else."

// frame renders the chat around the state, after its pictures, and splits
// it where the question goes: the prefix (the pictures and the state) and
// what follows the question (the end of the user turn and the start of the
// answer).
func (e *Evaluator) frame(state string, pics []picture) (prefix, suffix string, err error) {
	var user strings.Builder
	for _, pic := range pics {
		fmt.Fprintf(&user, "%s: %s\n", pic.caption, inference.ImageMarker)
	}
	if len(pics) > 0 {
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
		if q.Yes != "" {
			b.WriteString("\nYes means: " + inference.Literal(q.Yes))
		}
		if q.No != "" {
			b.WriteString("\nNo means: " + inference.Literal(q.No))
		}
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
			fmt.Fprintf(&b, "%s. %s\n", labels[i], orDefault(l, fmt.Sprintf("Level %d", i)))
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

// A label is what the model answers to pick an option: its text, as the
// prompt shows it, and its tokens.
type label struct {
	text   string
	tokens []int
}

// labelPools are the labels of a model: single tokens where the
// vocabulary has enough (letters for choices, digits from 1 for short
// scales, a yes/no pair), and numbers of a fixed width for longer choices
// ("01" to "99", "001" to "255"), each as many tokens as the model
// spells it with. A choice's probabilities are then products over its
// labels' tokens, read on branches of the same prefix (see
// inference.Branch). Labels of the same length are never a prefix of
// each other.
type labelPools struct {
	letters, digits []label
	yesNo           [2]label

	mu       sync.Mutex
	numbered map[int][]label // by width
}

// loadLabels finds the model's labels, once per Evaluator.
func (e *Evaluator) loadLabels() error {
	e.once.Do(func() { e.pools, e.poolErr = e.findLabels() })
	return e.poolErr
}

// findLabels tokenizes the candidate single-token labels and keeps those
// that are one token.
func (e *Evaluator) findLabels() (*labelPools, error) {
	lp := &labelPools{numbered: map[int][]label{}}
	single := func(s string) (label, bool) {
		toks, err := e.cfg.Engine.Tokenize(e.cfg.Model, s)
		if err != nil || len(toks) != 1 {
			return label{}, false
		}
		return label{s, toks}, true
	}
	seen := map[int]bool{}
	add := func(pool *[]label, s string) {
		if l, ok := single(s); ok && !seen[l.tokens[0]] {
			seen[l.tokens[0]] = true
			*pool = append(*pool, l)
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
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
		if ok1 && ok2 && y.tokens[0] != n.tokens[0] {
			lp.yesNo, found = [2]label{y, n}, true
			break
		}
	}
	if !found {
		l, err := e.numbers(lp, 1)
		if err != nil {
			return nil, err
		}
		lp.yesNo = [2]label{l[0], l[1]}
	}
	return lp, nil
}

// numbers returns the labels "1" to "9", "01" to "99" or "001" to "255"
// for width 1, 2 or 3, tokenized once per Evaluator.
func (e *Evaluator) numbers(lp *labelPools, width int) ([]label, error) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if l, ok := lp.numbered[width]; ok {
		return l, nil
	}
	n := min(int(math.Pow10(width))-1, MaxOptions)
	labels := make([]label, n)
	seen := map[string]bool{}
	for i := range labels {
		text := fmt.Sprintf("%0*d", width, i+1)
		toks, err := e.cfg.Engine.Tokenize(e.cfg.Model, text)
		if err != nil {
			return nil, fmt.Errorf("decision: tokenizing the label %q: %w", text, err)
		}
		if len(toks) == 0 || len(toks) > inference.MaxCandidateTokens || seen[fmt.Sprint(toks)] {
			return nil, fmt.Errorf("decision: model %q spells the label %q as %d tokens %v, which cannot label an option", e.cfg.Model, text, len(toks), toks)
		}
		seen[fmt.Sprint(toks)] = true
		labels[i] = label{text, toks}
	}
	if err := prefixFree(labels); err != nil {
		return nil, fmt.Errorf("decision: model %q: %w", e.cfg.Model, err)
	}
	lp.numbered[width] = labels
	return labels, nil
}

// prefixFree checks that no label's tokens begin another's: the model
// answering the longer one would count for the shorter too.
func prefixFree(labels []label) error {
	sorted := slices.Clone(labels)
	slices.SortFunc(sorted, func(a, b label) int { return slices.Compare(a.tokens, b.tokens) })
	for i := 1; i < len(sorted); i++ {
		a, b := sorted[i-1].tokens, sorted[i].tokens
		if len(a) <= len(b) && slices.Equal(a, b[:len(a)]) {
			return fmt.Errorf("the tokens of label %q begin those of %q", sorted[i-1].text, sorted[i].text)
		}
	}
	return nil
}

// labelsFor picks the labels of q's options: yes and no for a noul,
// digits for a score of up to 9 levels and letters beyond, letters for a
// choice of up to 26 options (where the model has them as single tokens)
// and numbers beyond.
func (e *Evaluator) labelsFor(lp *labelPools, q Question) ([]label, error) {
	switch q.Type {
	case TypeNoul:
		return lp.yesNo[:], nil
	case TypeScore:
		if n := len(q.Labels); n <= len(lp.digits) {
			return lp.digits[:n], nil
		} else if n <= len(lp.letters) {
			return lp.letters[:n], nil
		}
		return e.numbers(lp, 2)
	}
	n := len(q.Options)
	if n <= len(lp.letters) {
		return lp.letters[:n], nil
	}
	l, err := e.numbers(lp, len(strconv.Itoa(n)))
	if err != nil {
		return nil, err
	}
	return l[:n], nil
}
