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

// scoreWork is what a Score request adds to its work: the branches'
// tokens and candidate trees, and the result the runner fills in.
type scoreWork struct {
	branches [][]backend.Token
	trees    []*runner.CandidateTree
	result   ScoreResult
}

// Tokenize returns the tokens of a prompt text (see Literal) in the
// model's vocabulary, as it would be tokenized inside a prompt:
// special-token text outside Literal's marks becomes those tokens, and no
// BOS is added. It decodes nothing.
func (e *Engine) Tokenize(modelID, text string) (out []int, err error) {
	err = e.use(context.Background(), modelID, func(m *model) error {
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
	err = e.use(context.Background(), req.Model, func(m *model) error {
		if len(req.Messages) == 0 {
			text = req.Prompt
			return nil
		}
		text, err = m.render(req, nil)
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
	m, release, err := e.acquire(context.Background(), req.Model)
	if err != nil {
		return nil, err
	}
	defer release()
	if m.runner == nil {
		return nil, fmt.Errorf("%w: model %q is an encoder: use Engine.Rank or Engine.Embed", ErrInvalidRequest, req.Model)
	}
	if len(m.runner.branchSeqs) == 0 {
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
	room := m.runner.branchRoom(prefixLen)
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
		if err := m.runner.fits(prefixLen, toks, tree, field); err != nil {
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
	m, release, err := e.acquire(ctx, p.Request.Model)
	if err != nil {
		return nil, err
	}
	defer release()
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
		if err := m.runner.fits(len(prefix), b, p.plan.trees[i], Field("Images")); err != nil {
			return nil, err
		}
	}
	sw := &scoreWork{branches: p.plan.branches, trees: p.plan.trees}
	w := &work{prompt: prefix, images: images, score: sw, job: newJob(ctx)}
	e.holdJob(m, w.job)
	if !m.runner.enqueue(w) {
		err := fmt.Errorf("%w: model %q has %d requests waiting", ErrOverloaded, p.Request.Model, cap(m.runner.queue))
		w.job.finish(nil, err)
		return nil, err
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

// scoreReady decodes the branches of every scoring slot whose prefix is
// all in the KV cache, and frees the slot.
func (r *modelRunner) scoreReady() {
	for _, s := range r.slots {
		if s.w != nil && s.w.score != nil && s.leader == nil && s.prefilled == len(s.w.prompt) {
			r.branch(s)
		}
	}
}

// branchRoom is the number of KV cells that the branches of a prefix of n
// tokens may take at once: those kept for branches, and those that the
// prefix leaves of its sequence's context. While a slot's branches
// decode, no other sequence grows.
func (r *modelRunner) branchRoom(n int) int { return r.branchCells + r.perSeq - n }

// fits checks that a branch and its candidate tree fit after a prefix of
// n tokens: in the context, in the branch room, and in the branch
// sequences. field names what is at fault.
func (r *modelRunner) fits(n int, branch []backend.Token, t *runner.CandidateTree, field Path) error {
	switch cells, room := len(branch)+t.Cells(), r.branchRoom(n); {
	case n+len(branch)+t.Depth() > r.perSeq:
		return &FieldError{Path: field, Err: ErrContextLength,
			Reason: fmt.Sprintf("%d prefix tokens, %d branch tokens and candidates %d tokens deep; the context holds %d", n, len(branch), t.Depth(), r.perSeq)}
	case cells > room:
		return &FieldError{Path: field, Err: ErrContextLength,
			Reason: fmt.Sprintf("the branch and its candidates take %d KV cells; %d are left for branches", cells, room)}
	case 1+len(t.Paths) > len(r.branchSeqs):
		return &FieldError{Path: field.Dot("Candidates"), Err: ErrContextLength,
			Reason: fmt.Sprintf("the candidates branch %d ways after their first token and decode on %d sequences; Config.Branches is %d", len(t.Paths), 1+len(t.Paths), len(r.branchSeqs))}
	}
	return nil
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

// branch decodes the branches of slot s in groups that fit the branch
// sequences and the KV room (each group in as few batches as the batch
// size allows), reads the candidates' probabilities and ends the
// request. The branch sequences are empty again afterwards; the prefix
// stays in the slot's cache.
func (r *modelRunner) branch(s *slot) {
	sw := s.w.score
	res := &sw.result
	res.Branches = make([]BranchScore, len(sw.branches))
	room := r.branchRoom(len(s.w.prompt))
	for i := 0; i < len(sw.branches); {
		if s.w.job.abandoned() {
			r.release(s, nil, s.w.job.cause())
			return
		}
		j, seqs, cells := i, 0, 0
		for j < len(sw.branches) {
			t := sw.trees[j]
			n, c := 1+len(t.Paths), len(sw.branches[j])+t.Cells()
			if seqs+n > len(r.branchSeqs) || cells+c > room {
				break
			}
			seqs, cells = seqs+n, cells+c
			j++
		}
		err := errors.New("inference: a score branch does not fit the branch sequences and KV room")
		if j > i {
			err = r.branchGroup(s, i, j)
		}
		for _, seq := range r.branchSeqs[:max(seqs, 1)] {
			r.ctx.ClearSequence(seq)
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

// branchGroup decodes branches [i, j) of slot s: each on a branch
// sequence that first shares the prefix's cells, then the paths of its
// candidate tree, each on a sequence that shares the branch's cells.
func (r *modelRunner) branchGroup(s *slot, i, j int) error {
	sw := s.w.score
	type read struct{ branch, node, idx int }
	var reads []read
	edges := make([][]float64, j-i)
	b := r.batch
	b.Clear()
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		r.steps.Add(1)
		if err := r.ctx.Decode(b); err != nil {
			return err
		}
		for _, o := range reads {
			logits := r.ctx.Logits(o.idx)
			sw.trees[o.branch].Read(o.node, logits, backend.LogSumExp(r.ctx, logits), edges[o.branch-i])
		}
		reads = reads[:0]
		b.Clear()
		return nil
	}
	add := func(t backend.Token, pos, seq, branch, node int) error {
		if b.Len() == b.Cap() {
			if err := flush(); err != nil {
				return err
			}
		}
		r.seqBuf = append(r.seqBuf[:0], seq)
		idx, err := b.Add(t, pos, r.seqBuf, node >= 0)
		if err == nil && node >= 0 {
			reads = append(reads, read{branch, node, idx})
		}
		return err
	}
	base := runner.PosAt(s.w.images, len(s.w.prompt))
	// Branch k takes the branch sequence first[k-i], and its paths those
	// after it.
	first := make([]int, j-i)
	next := 0
	for k := i; k < j; k++ {
		first[k-i] = next
		next += 1 + len(sw.trees[k].Paths)
		edges[k-i] = make([]float64, sw.trees[k].Nodes())
		seq := r.branchSeqs[first[k-i]]
		r.ctx.ClearSequence(seq)
		if err := r.ctx.CopyTokens(s.seq, seq, 0, -1); err != nil {
			return err
		}
		toks := sw.branches[k]
		for p, t := range toks {
			node := -1
			if p == len(toks)-1 {
				node = 0
			}
			if err := add(t, base+p, seq, k, node); err != nil {
				return err
			}
		}
		r.decoded.Add(int64(len(toks)))
	}
	if err := flush(); err != nil {
		return err
	}
	for k := i; k < j; k++ {
		t, from := sw.trees[k], r.branchSeqs[first[k-i]]
		start := base + len(sw.branches[k])
		for n, path := range t.Paths {
			seq := r.branchSeqs[first[k-i]+1+n]
			r.ctx.ClearSequence(seq)
			if err := r.ctx.CopyTokens(from, seq, 0, -1); err != nil {
				return err
			}
			for p, tok := range path {
				if err := add(tok, start+p, seq, k, t.Reads[n][p]); err != nil {
					return err
				}
			}
			r.decoded.Add(int64(len(path)))
		}
	}
	if err := flush(); err != nil {
		return err
	}
	for k := i; k < j; k++ {
		lp, pr := sw.trees[k].Score(edges[k-i])
		sw.result.Branches[k] = BranchScore{LogProbs: lp, Probabilities: pr}
	}
	return nil
}
