//go:build cgo

package inference

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/inferkit/inferkit/internal/llamacpp"
)

// maxBranches bounds the branches of one ScoreRequest.
const maxBranches = 256

// scoreWork is what a Score request adds to its work: the branches'
// tokens and candidates, and the result the runner fills in.
type scoreWork struct {
	branches   [][]llamacpp.Token
	candidates [][]llamacpp.Token
	result     ScoreResult
}

// Tokenize returns the tokens of a prompt text (see Literal) in the
// model's vocabulary, as it would be tokenized inside a prompt:
// special-token text outside Literal's marks becomes those tokens, and no
// BOS is added. It decodes nothing.
func (e *Engine) Tokenize(modelID, text string) (out []int, err error) {
	err = e.use(modelID, func(m *model) error {
		toks, err := m.tokenize(text, false, 0)
		for _, t := range toks {
			out = append(out, int(t))
		}
		return err
	})
	return out, err
}

// RenderPrompt returns the prompt text (see Literal) that req's messages
// become through the model's chat template (with the generation prompt,
// and the thinking switch of req.NoThinking), or req.Prompt when it has no
// messages: what Generate tokenizes. The control-token text of the
// messages stays marked as data in it. It decodes nothing.
func (e *Engine) RenderPrompt(req Request) (text string, err error) {
	err = e.use(req.Model, func(m *model) error {
		if len(req.Messages) == 0 {
			text = req.Prompt
			return nil
		}
		text, err = m.render(req)
		return err
	})
	return text, err
}

// Score decodes req's prefix once and each of its branches on a sequence
// of its own, all in one batch, and returns the probabilities of each
// branch's candidate tokens: PrepareScore, then RunScore. The prefix takes
// a sequence like a generation request, waiting in the same queue, and
// stays in the prompt cache afterwards.
func (e *Engine) Score(ctx context.Context, req ScoreRequest) (ScoreResult, error) {
	p, err := e.PrepareScore(req)
	if err != nil {
		return ScoreResult{}, err
	}
	return e.RunScore(ctx, p)
}

// scorePlan is what RunScore needs of a PreparedScore beyond its request.
type scorePlan struct {
	engine *Engine
	// texts are the tokens of the prefix's text around its images: one
	// more than the images; BOS, where the model wants one, leads.
	texts      [][]llamacpp.Token
	branches   [][]llamacpp.Token
	candidates [][]llamacpp.Token
}

// PrepareScore checks req and tokenizes its text, decoding nothing and
// encoding no image. A prefix and branch that do not fit in a sequence's
// context, or a branch longer than Config.BranchContext, fail with
// ErrContextLength; an invalid request with ErrInvalidRequest (an
// *ImageError for an image that is no picture the model reads).
func (e *Engine) PrepareScore(req ScoreRequest) (*PreparedScore, error) {
	m, release, err := e.acquire(req.Model)
	if err != nil {
		return nil, err
	}
	defer release()
	if m.runner == nil {
		return nil, fmt.Errorf("%w: model %q is an encoder: use Engine.Rank", ErrInvalidRequest, req.Model)
	}
	if len(m.runner.branchSeqs) == 0 {
		return nil, fmt.Errorf("%w: Config.Branches leaves no sequence for scoring", ErrInvalidRequest)
	}
	if len(req.Branches) == 0 || len(req.Branches) > maxBranches {
		return nil, fieldError("Branches", "%d branches, want 1 to %d", len(req.Branches), maxBranches)
	}
	plan := &scorePlan{engine: e}
	limit, room := m.info.ContextLength, m.runner.branchCells
	prefixLen := 0
	if len(req.Images) == 0 {
		toks, err := m.tokenize(req.Prefix, true, limit)
		if err != nil {
			return nil, err
		}
		plan.texts, prefixLen = [][]llamacpp.Token{toks}, len(toks)
	} else {
		if m.projector == nil {
			return nil, fieldError("Images", "the model reads no images (it has no projector)")
		}
		texts := strings.Split(req.Prefix, ImageMarker)
		if len(texts)-1 != len(req.Images) {
			return nil, fieldError("Images", "%d images for %d image markers in Prefix", len(req.Images), len(texts)-1)
		}
		for i, img := range req.Images {
			if err := checkImage(img); err != nil {
				return nil, &ImageError{Index: i, Reason: err.Error()}
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
		return nil, fieldError("Prefix", "gives no tokens")
	}
	inputs := prefixLen
	vocab := m.llm.VocabSize()
	for i, b := range req.Branches {
		toks, err := m.tokenize(b.Text, false, room)
		if errors.Is(err, ErrContextLength) {
			return nil, &FieldError{Field: fmt.Sprintf("Branches[%d].Text", i), Err: ErrContextLength,
				Reason: fmt.Sprintf("more tokens than Config.BranchContext (%d)", room)}
		}
		if err != nil {
			return nil, err
		}
		switch {
		case len(toks) == 0:
			return nil, fieldError(fmt.Sprintf("Branches[%d].Text", i), "gives no tokens")
		case len(toks) > room:
			return nil, &FieldError{Field: fmt.Sprintf("Branches[%d].Text", i), Err: ErrContextLength,
				Reason: fmt.Sprintf("%d tokens, more than Config.BranchContext (%d)", len(toks), room)}
		case prefixLen+len(toks) > limit:
			return nil, &FieldError{Field: "Prefix", Err: ErrContextLength,
				Reason: fmt.Sprintf("%d prefix and %d branch tokens, context holds %d", prefixLen, len(toks), limit)}
		case len(b.Candidates) == 0:
			return nil, fieldError(fmt.Sprintf("Branches[%d].Candidates", i), "none")
		}
		cands := make([]llamacpp.Token, len(b.Candidates))
		for j, c := range b.Candidates {
			if c < 0 || c >= vocab {
				return nil, fieldError(fmt.Sprintf("Branches[%d].Candidates[%d]", i, j), "token %d, outside the vocabulary of %d", c, vocab)
			}
			cands[j] = llamacpp.Token(c)
		}
		plan.branches = append(plan.branches, toks)
		plan.candidates = append(plan.candidates, cands)
		inputs += len(toks)
	}
	return &PreparedScore{Request: req, InputTokens: inputs, plan: plan}, nil
}

// RunScore encodes a prepared request's images, decodes its prefix and
// branches and returns the branches' scores. A prefix whose images take
// it past the context fails with ErrContextLength.
func (e *Engine) RunScore(ctx context.Context, p *PreparedScore) (ScoreResult, error) {
	w, err := e.submitScore(ctx, p)
	if err != nil {
		return ScoreResult{}, err
	}
	if err := w.job.wait(); err != nil {
		return ScoreResult{}, err
	}
	return w.score.result, nil
}

func (e *Engine) submitScore(ctx context.Context, p *PreparedScore) (*work, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p == nil || p.plan == nil || p.plan.engine != e {
		return nil, fmt.Errorf("%w: a PreparedScore not made by this engine's PrepareScore", ErrInvalidRequest)
	}
	m, release, err := e.acquire(p.Request.Model)
	if err != nil {
		return nil, err
	}
	defer release()
	prefix, images, err := m.scorePrefix(p, e.cfg.Batch)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // encoding the images took a while
	}
	if len(prefix) == 0 {
		return nil, fieldError("Prefix", "gives no tokens")
	}
	for _, b := range p.plan.branches {
		if limit := m.info.ContextLength; len(prefix)+len(b) > limit {
			return nil, &FieldError{Field: "Images", Err: ErrContextLength,
				Reason: fmt.Sprintf("%d prefix tokens with the images and %d branch tokens, context holds %d", len(prefix), len(b), limit)}
		}
	}
	sw := &scoreWork{branches: p.plan.branches, candidates: p.plan.candidates}
	w := &work{prompt: prefix, images: images, score: sw, job: newJob(ctx)}
	if !m.runner.enqueue(w) {
		return nil, fmt.Errorf("%w: model %q has %d requests waiting", ErrOverloaded, p.Request.Model, cap(m.runner.queue))
	}
	return w, nil
}

// scorePrefix puts a prepared prefix together: its text's tokens, and
// each image encoded in place, its tokens standing in the prompt as
// imageTokens and its embeddings in the returned spans. batch is the most
// tokens one decode takes. Only each image, alone, goes through the
// projector (which adds the model's own markers around it).
func (m *model) scorePrefix(p *PreparedScore, batch int) ([]llamacpp.Token, []imageSpan, error) {
	var prefix []llamacpp.Token
	var spans []imageSpan
	for i, toks := range p.plan.texts {
		prefix = append(prefix, toks...)
		if i == len(p.Request.Images) {
			break
		}
		chunks, err := m.projector.Tokenize(llamacpp.MediaMarker, p.Request.Images[i:i+1])
		if ie, ok := errors.AsType[*llamacpp.ImageError](err); ok {
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
			spans = append(spans, imageSpan{start: len(prefix), rows: c.Image, whole: m.projector.NonCausal()})
			prefix = append(prefix, imageTokens(p.Request.Images[i], n)...)
		}
		if len(prefix) > m.info.ContextLength {
			return nil, nil, &FieldError{Field: "Images", Err: ErrContextLength,
				Reason: fmt.Sprintf("the prefix has more than %d tokens with its images", m.info.ContextLength)}
		}
	}
	return prefix, spans, nil
}

// scoreReady decodes the branches of every scoring slot whose prefix is
// all in the KV cache, and frees the slot.
func (r *runner) scoreReady() {
	for _, s := range r.slots {
		if s.w != nil && s.w.score != nil && s.leader == nil && s.prefilled == len(s.w.prompt) {
			r.branch(s)
		}
	}
}

// branch decodes the branches of slot s in groups that fit the branch
// sequences and the KV cells kept for them (each group in as few batches
// as the batch size allows), reads the candidates' probabilities and ends
// the request. The branch sequences are empty again afterwards; the
// prefix stays in the slot's cache.
func (r *runner) branch(s *slot) {
	sw := s.w.score
	res := &sw.result
	res.Branches = make([]BranchScore, len(sw.branches))
	for i := 0; i < len(sw.branches); {
		if s.w.job.abandoned() {
			r.release(s, nil, s.w.job.cause())
			return
		}
		j, cells := i, 0
		for j < len(sw.branches) && j-i < len(r.branchSeqs) && cells+len(sw.branches[j]) <= r.branchCells {
			cells += len(sw.branches[j])
			j++
		}
		err := r.branchGroup(s, i, j)
		for k := range j - i {
			r.ctx.ClearSequence(r.branchSeqs[k])
		}
		if err != nil {
			r.log.Error("inference: decoding score branches failed", "err", err)
			r.release(s, nil, err)
			return
		}
		i = j
	}
	prompt := len(s.w.prompt)
	for _, b := range sw.branches {
		prompt += len(b)
	}
	res.Usage = Usage{PromptTokens: prompt, CachedTokens: len(s.w.prompt) - s.decoded}
	r.release(s, nil, nil)
}

// branchGroup decodes branches [i, j) of slot s, branch i+k on sequence
// branchSeqs[k], which first shares the prefix's cells.
func (r *runner) branchGroup(s *slot, i, j int) error {
	sw := s.w.score
	for k := range j - i {
		seq := r.branchSeqs[k]
		r.ctx.ClearSequence(seq)
		if err := r.ctx.CopyTokens(s.seq, seq, 0, -1); err != nil {
			return err
		}
	}
	type out struct{ branch, idx int }
	var outs []out
	b := r.batch
	b.Clear()
	flush := func() error {
		r.steps.Add(1)
		if err := r.ctx.Decode(b); err != nil {
			return err
		}
		for _, o := range outs {
			sw.result.Branches[o.branch] = candidateScores(r.ctx.Logits(o.idx), sw.candidates[o.branch])
		}
		outs = outs[:0]
		b.Clear()
		return nil
	}
	base := s.w.posAt(len(s.w.prompt))
	for k := i; k < j; k++ {
		seq := r.seqBuf[:0]
		seq = append(seq, r.branchSeqs[k-i])
		r.seqBuf = seq
		toks := sw.branches[k]
		for p, t := range toks {
			if b.Len() == b.Cap() {
				if err := flush(); err != nil {
					return err
				}
			}
			last := p == len(toks)-1
			idx, err := b.Add(t, base+p, seq, last)
			if err != nil {
				return err
			}
			if last {
				outs = append(outs, out{k, idx})
			}
		}
		r.decoded.Add(int64(len(toks)))
	}
	return flush()
}

// candidateScores is the log-softmax of logits over the whole vocabulary,
// in float64, at the candidates.
func candidateScores(logits []float32, cands []llamacpp.Token) BranchScore {
	hi := math.Inf(-1)
	for _, l := range logits {
		hi = max(hi, float64(l))
	}
	var sum float64
	for _, l := range logits {
		sum += math.Exp(float64(l) - hi)
	}
	lse := hi + math.Log(sum)
	bs := BranchScore{LogProbs: make([]float64, len(cands)), Probabilities: make([]float64, len(cands))}
	for i, c := range cands {
		lp := float64(logits[c]) - lse
		bs.LogProbs[i], bs.Probabilities[i] = lp, math.Exp(lp)
	}
	return bs
}
