package inference

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/bitmap"
	"github.com/inferkit/inferkit/internal/runner"
)

// maxBranches bounds the branches of one ScoreRequest.
const maxBranches = 256

// Tokenize returns the tokens of a prompt text (see Literal) in the
// model's vocabulary, as it would be tokenized inside a prompt:
// special-token text outside Literal's marks becomes those tokens, and no
// BOS is added. It decodes nothing.
func (e *Engine) Tokenize(modelID, text string) ([]int, error) {
	l, err := e.acquire(context.Background(), modelID)
	if err != nil {
		return nil, err
	}
	defer l.release()
	if l.m.remote != nil {
		return nil, remoteOnly(modelID, "tokenizes on its own")
	}
	toks, err := l.m.tokenize(text, false, 0)
	var out []int
	for _, t := range toks {
		out = append(out, int(t))
	}
	return out, err
}

// RenderPrompt returns the prompt text (see Literal) that req's messages
// become through the model's chat template (with the generation prompt,
// and the thinking switch of req.NoThinking), or req.Prompt when it has no
// messages: what Generate tokenizes. The control-token text of the
// messages stays marked as data in it. It decodes nothing.
func (e *Engine) RenderPrompt(req Request) (string, error) {
	l, err := e.acquire(context.Background(), req.Model)
	if err != nil {
		return "", err
	}
	defer l.release()
	if l.m.remote != nil {
		return "", remoteOnly(req.Model, "renders its chat template on its own")
	}
	if len(req.Messages) == 0 {
		return req.Prompt, nil
	}
	return l.m.render(req, nil)
}

// Score decodes req's prefix once and each of its branches on a sequence
// of its own, all in one batch, and returns the probabilities of each
// branch's candidate tokens: PrepareScore, then RunScore. The prefix takes
// a sequence like a generation request, waiting in the same queue, and
// stays in the prompt cache afterwards.
func (e *Engine) Score(ctx context.Context, req ScoreRequest) (res ScoreResult, err error) {
	ctx, end := e.traceCall(ctx, opScore, req.Model)
	defer func() { end(res.Usage, err) }()
	l, err := e.acquire(ctx, req.Model)
	if err != nil {
		return ScoreResult{}, err
	}
	p, err := e.prepareScore(l.m, req)
	if err != nil {
		l.release()
		return ScoreResult{}, err
	}
	return e.runScore(ctx, l, p)
}

// scorePlan is what RunScore needs of a PreparedScore beyond its request.
type scorePlan struct {
	engine *Engine
	// texts are the tokens of the prefix's text around its images: one
	// more than the images; BOS, where the model wants one, leads.
	texts    [][]backend.Token
	branches [][]backend.Token
	trees    []*runner.CandidateTree
}

// PrepareScore checks req and tokenizes its text, decoding nothing and
// encoding no image. A branch and its candidates' inner tokens must fit
// after the prefix in a sequence's context, and in the KV cells that the
// prefix leaves of it plus Config.BranchContext; a branch's candidate
// tree may have at most Config.Branches-1 deepest inner nodes. Past
// those, it fails with ErrContextLength; an invalid request fails with
// ErrInvalidRequest (an *ImageError for an image that is no picture the
// model reads).
func (e *Engine) PrepareScore(req ScoreRequest) (*PreparedScore, error) {
	l, err := e.acquire(context.Background(), req.Model)
	if err != nil {
		return nil, err
	}
	defer l.release()
	return e.prepareScore(l.m, req)
}

// prepareScore is PrepareScore on m, which a lease holds.
func (e *Engine) prepareScore(m *model, req ScoreRequest) (*PreparedScore, error) {
	if m.remote != nil {
		return nil, remoteOnly(req.Model, "scores no branches: its decisions read the log-probabilities of an answer (package decision)")
	}
	if m.runner == nil {
		return nil, fmt.Errorf("%w: model %q is an encoder: use Engine.Rank or Engine.Embed", ErrInvalidRequest, req.Model)
	}
	if m.runner.BranchSequences() == 0 {
		return nil, fmt.Errorf("%w: Config.Branches leaves no sequence for scoring", ErrInvalidRequest)
	}
	if len(req.Branches) == 0 || len(req.Branches) > maxBranches {
		return nil, fieldError(Field("Branches"), "%d branches, want 1 to %d", len(req.Branches), maxBranches)
	}
	plan := &scorePlan{engine: e}
	limit := m.info.ContextLength
	prefixLen := 0
	if len(req.Images) == 0 {
		toks, err := m.tokenize(req.Prefix, true, limit)
		if err != nil {
			return nil, err
		}
		plan.texts, prefixLen = [][]backend.Token{toks}, len(toks)
	} else {
		if m.projector == nil {
			return nil, fieldError(Field("Images"), "the model reads no images (it has no projector)")
		}
		texts := strings.Split(req.Prefix, ImageMarker)
		if len(texts)-1 != len(req.Images) {
			return nil, fieldError(Field("Images"), "%d images for %d image markers in Prefix", len(req.Images), len(texts)-1)
		}
		for i, img := range req.Images {
			if _, err := bitmap.Check(img); err != nil {
				return nil, &ImageError{Index: i, Reason: imageReason(err)}
			}
		}
		for i, text := range texts {
			toks, err := m.tokenize(text, i == 0, limit-prefixLen)
			if err != nil {
				return nil, err
			}
			plan.texts = append(plan.texts, toks)
			prefixLen += len(toks)
		}
	}
	if prefixLen == 0 && len(req.Images) == 0 {
		return nil, fieldError(Field("Prefix"), "gives no tokens")
	}
	inputs := prefixLen
	room := m.runner.BranchRoom(prefixLen)
	for i, b := range req.Branches {
		field := Field("Branches").At(i)
		toks, err := m.tokenize(b.Text, false, room)
		if errors.Is(err, ErrContextLength) {
			return nil, &FieldError{Path: field.Dot("Text"), Err: ErrContextLength,
				Reason: fmt.Sprintf("more tokens than the %d KV cells left for branches", room)}
		}
		if err != nil {
			return nil, err
		}
		if len(toks) == 0 {
			return nil, fieldError(field.Dot("Text"), "gives no tokens")
		}
		tree, err := m.candidateTree(b.Candidates, field)
		if err != nil {
			return nil, err
		}
		if err := fits(m.runner, prefixLen, toks, tree, field); err != nil {
			return nil, err
		}
		plan.branches = append(plan.branches, toks)
		plan.trees = append(plan.trees, tree)
		inputs += len(toks)
	}
	return &PreparedScore{Request: req, InputTokens: inputs, plan: plan}, nil
}

// RunScore encodes a prepared request's images, decodes its prefix and
// branches and returns the branches' scores. A prefix whose images take
// it past the context fails with ErrContextLength.
func (e *Engine) RunScore(ctx context.Context, p *PreparedScore) (res ScoreResult, err error) {
	if err := ctx.Err(); err != nil {
		return ScoreResult{}, err
	}
	if p == nil || p.plan == nil || p.plan.engine != e {
		return ScoreResult{}, fmt.Errorf("%w: a PreparedScore not made by this engine's PrepareScore", ErrInvalidRequest)
	}
	ctx, end := e.traceCall(ctx, opScore, p.Request.Model)
	defer func() { end(res.Usage, err) }()
	l, err := e.acquire(ctx, p.Request.Model)
	if err != nil {
		return ScoreResult{}, err
	}
	return e.runScore(ctx, l, p)
}

// runScore is RunScore on the model that l holds; it releases l once the
// request's job has finished, or it has failed before.
func (e *Engine) runScore(ctx context.Context, l *lease, p *PreparedScore) (ScoreResult, error) {
	w, err := e.submitScore(ctx, l, p)
	if err != nil {
		return ScoreResult{}, err
	}
	if err := w.Job.Wait(); err != nil {
		return ScoreResult{}, runnerError(err)
	}
	res := w.Score.Result
	out := ScoreResult{Branches: make([]BranchScore, len(res.Branches)),
		Usage: Usage{PromptTokens: res.Usage.Prompt, CachedTokens: res.Usage.Cached}}
	for i, b := range res.Branches {
		out.Branches[i] = BranchScore(b)
	}
	return out, nil
}

// submitScore queues p on l's model, whose job releases l when it
// finishes; it releases l itself when it fails before.
func (e *Engine) submitScore(ctx context.Context, l *lease, p *PreparedScore) (w *runner.Work, err error) {
	defer func() {
		if w == nil {
			l.release()
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m := l.m
	prefix, images, err := e.withImages(ctx, m, p.plan.texts, p.Request.Images)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // encoding the images took a while
	}
	if len(prefix) == 0 {
		return nil, fieldError(Field("Prefix"), "gives no tokens")
	}
	for i, b := range p.plan.branches {
		if err := fits(m.runner, len(prefix), b, p.plan.trees[i], Field("Images")); err != nil {
			return nil, err
		}
	}
	sw := &runner.Score{Branches: p.plan.branches, Trees: p.plan.trees}
	job := runner.NewJobs(ctx, 1, l.release)[0]
	w = &runner.Work{Prompt: prefix, Images: images, Score: sw, Job: job}
	if err := m.runner.Submit(w); err != nil {
		return nil, submitError(err, p.Request.Model, m.runner)
	}
	return w, nil
}

// withImages puts a prompt together on m: its text's tokens (texts, one
// more than images), and each image decoded (decodeImage) and encoded in
// place, its tokens standing in the prompt as imageTokens (of its bytes)
// and its embeddings in the returned spans. Only each image, alone, goes
// through the projector (which adds the model's own markers around it),
// and is dropped once encoded: a request's pictures are decoded one at a
// time. The projector is locked to encode only.
func (e *Engine) withImages(ctx context.Context, m *model, texts [][]backend.Token, images [][]byte) ([]backend.Token, []runner.ImageSpan, error) {
	batch := e.cfg.Batch
	var prefix []backend.Token
	var spans []runner.ImageSpan
	for i, toks := range texts {
		prefix = append(prefix, toks...)
		if i == len(images) {
			break
		}
		pixels, err := e.decodeImage(ctx, i, images[i])
		if err != nil {
			return nil, nil, err
		}
		chunks, err := m.projector.Encode(pixels)
		if ie, ok := errors.AsType[*backend.ImageError](err); ok {
			return nil, nil, &ImageError{Index: i, Reason: ie.Err.Error()}
		}
		if err != nil {
			return nil, nil, err
		}
		for _, c := range chunks {
			if c.Image == nil {
				prefix = append(prefix, c.Tokens...)
				continue
			}
			n := c.Image.Tokens()
			if m.projector.NonCausal() && n > batch {
				return nil, nil, &ImageError{Index: i, Reason: fmt.Sprintf("takes %d tokens, and this model reads an image in one batch of at most Config.Batch (%d)", n, batch)}
			}
			spans = append(spans, runner.ImageSpan{Start: len(prefix), Rows: c.Image, Whole: m.projector.NonCausal()})
			prefix = append(prefix, runner.ImageTokens(images[i], n)...)
		}
		if len(prefix) > m.info.ContextLength {
			return nil, nil, &FieldError{Path: Field("Images"), Err: ErrContextLength,
				Reason: fmt.Sprintf("the prefix has more than %d tokens with its images", m.info.ContextLength)}
		}
	}
	return prefix, spans, nil
}

// fits checks that a branch and its candidate tree fit after a prefix of
// n tokens on r (runner.Runner.Fits); field names what is at fault.
func fits(r *runner.Runner, n int, branch []backend.Token, t *runner.CandidateTree, field Path) error {
	err := r.Fits(n, branch, t)
	if fe, ok := errors.AsType[*runner.FitError](err); ok {
		if fe.Candidates {
			field = field.Dot("Candidates")
		}
		return &FieldError{Path: field, Err: ErrContextLength, Reason: fe.Reason}
	}
	return err
}

// candidateTree checks a branch's candidates and builds their tree.
func (m *model) candidateTree(cands [][]int, field Path) (*runner.CandidateTree, error) {
	if len(cands) == 0 || len(cands) > MaxCandidates {
		return nil, fieldError(field.Dot("Candidates"), "%d candidates, want 1 to %d", len(cands), MaxCandidates)
	}
	vocab := m.llm.VocabSize()
	toks := make([][]backend.Token, len(cands))
	for i, c := range cands {
		if len(c) == 0 || len(c) > MaxCandidateTokens {
			return nil, fieldError(field.Dot("Candidates").At(i), "%d tokens, want 1 to %d", len(c), MaxCandidateTokens)
		}
		toks[i] = make([]backend.Token, len(c))
		for j, t := range c {
			if t < 0 || t >= vocab {
				return nil, fieldError(field.Dot("Candidates").At(i).At(j), "token %d, outside the vocabulary of %d", t, vocab)
			}
			toks[i][j] = backend.Token(t)
		}
	}
	return runner.NewCandidateTree(toks), nil
}
