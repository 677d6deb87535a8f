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
// branch's candidate tokens. The prefix takes a sequence like a generation
// request, waiting in the same queue, and stays in the prompt cache
// afterwards. A prefix and branch that do not fit in a sequence's context,
// or a branch longer than Config.BranchContext, fail with
// ErrContextLength before any work.
func (e *Engine) Score(ctx context.Context, req ScoreRequest) (ScoreResult, error) {
	w, err := e.submitScore(ctx, req)
	if err != nil {
		return ScoreResult{}, err
	}
	if err := w.job.wait(); err != nil {
		return ScoreResult{}, err
	}
	return w.score.result, nil
}

func (e *Engine) submitScore(ctx context.Context, req ScoreRequest) (*work, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
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
		return nil, fmt.Errorf("%w: %d branches, want 1 to %d", ErrInvalidRequest, len(req.Branches), maxBranches)
	}
	prefix, images, err := m.scorePrefix(req, e.cfg.Batch)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // encoding the images took a while
	}
	if len(prefix) == 0 {
		return nil, fmt.Errorf("%w: Prefix gives no tokens", ErrInvalidRequest)
	}
	sw := &scoreWork{}
	limit, room := m.info.ContextLength, m.runner.branchCells
	vocab := m.llm.VocabSize()
	for i, b := range req.Branches {
		toks, err := m.tokenize(b.Text, false, room)
		if errors.Is(err, ErrContextLength) {
			return nil, fmt.Errorf("%w: branch %d has more tokens than Config.BranchContext (%d)", ErrContextLength, i, room)
		}
		if err != nil {
			return nil, err
		}
		switch {
		case len(toks) == 0:
			return nil, fmt.Errorf("%w: Branches[%d].Text gives no tokens", ErrInvalidRequest, i)
		case len(prefix)+len(toks) > limit:
			return nil, fmt.Errorf("%w: %d prefix and %d branch tokens, context holds %d", ErrContextLength, len(prefix), len(toks), limit)
		case len(toks) > room:
			return nil, fmt.Errorf("%w: branch %d has %d tokens, Config.BranchContext is %d", ErrContextLength, i, len(toks), room)
		case len(b.Candidates) == 0:
			return nil, fmt.Errorf("%w: Branches[%d] has no candidates", ErrInvalidRequest, i)
		}
		cands := make([]llamacpp.Token, len(b.Candidates))
		for j, c := range b.Candidates {
			if c < 0 || c >= vocab {
				return nil, fmt.Errorf("%w: Branches[%d].Candidates[%d] is token %d, outside the vocabulary of %d", ErrInvalidRequest, i, j, c, vocab)
			}
			cands[j] = llamacpp.Token(c)
		}
		sw.branches = append(sw.branches, toks)
		sw.candidates = append(sw.candidates, cands)
	}
	w := &work{prompt: prefix, images: images, score: sw, job: newJob(ctx)}
	if !m.runner.enqueue(w) {
		return nil, fmt.Errorf("%w: model %q has %d requests waiting", ErrOverloaded, req.Model, cap(m.runner.queue))
	}
	return w, nil
}

// scorePrefix tokenizes a Score request's prefix, with BOS where the model
// wants it, and encodes its images in place: each image's tokens stand in
// the prompt as imageTokens, and its embeddings in the returned spans.
// batch is the most tokens one decode takes. The text is tokenized here,
// safely, and only each image, alone, goes through the projector (which
// adds the model's own markers around it).
func (m *model) scorePrefix(req ScoreRequest, batch int) ([]llamacpp.Token, []imageSpan, error) {
	limit := m.info.ContextLength
	if len(req.Images) == 0 {
		prefix, err := m.tokenize(req.Prefix, true, limit)
		return prefix, nil, err
	}
	if m.projector == nil {
		return nil, nil, fieldError("Images", "the model reads no images (it has no projector)")
	}
	texts := strings.Split(req.Prefix, ImageMarker)
	if len(texts)-1 != len(req.Images) {
		return nil, nil, fieldError("Images", "%d images for %d image markers in Prefix", len(req.Images), len(texts)-1)
	}
	for i, img := range req.Images {
		if err := checkImage(img); err != nil {
			return nil, nil, &ImageError{Index: i, Reason: err.Error()}
		}
	}
	var prefix []llamacpp.Token
	var spans []imageSpan
	for i, text := range texts {
		toks, err := m.tokenize(text, i == 0, limit-len(prefix))
		if err != nil {
			return nil, nil, err
		}
		prefix = append(prefix, toks...)
		if i == len(req.Images) {
			break
		}
		chunks, err := m.projector.Tokenize(llamacpp.MediaMarker, req.Images[i:i+1])
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
			prefix = append(prefix, imageTokens(req.Images[i], n)...)
		}
		if len(prefix) > limit {
			return nil, nil, fmt.Errorf("%w: the prefix has more than %d tokens", ErrContextLength, limit)
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
