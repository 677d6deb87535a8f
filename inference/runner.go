package inference

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/family"
	"github.com/inferkit/inferkit/internal/runner"
)

// work is a queued request: its tokens, limits and sampler. The runner owns
// it from the moment it is dequeued and closes its sampler.
type work struct {
	job       *job
	prompt    []backend.Token
	images    []runner.ImageSpan // the prompt's images, in order
	maxTokens int
	stops     []string
	sampler   backend.Sampler
	grammar   backend.Grammar // constrains the answer, or nil
	family    *family.Family  // parses the output; nil: plain text
	tools     []Tool          // the tools the model sees
	single    bool            // at most one tool call
	logprobs  bool            // record the answer tokens' log-probabilities
	top       int             // and this many alternatives each
	promptLP  bool            // record the prompt tokens' log-probabilities
	noOutput  bool            // decode the prompt only

	// score, when set, makes this Engine.Score work: the prompt is the
	// prefix, and its branches are decoded once it is in the KV cache.
	score *scoreWork

	// thinking: the prompt opened a thinking section. budget bounds the
	// tokens spent in one (-1: no bound), closed with thinkClose.
	thinking   bool
	budget     int
	thinkClose []backend.Token
}

// close frees what the work holds in the backend.
func (w *work) close() {
	if w.sampler != nil {
		w.sampler.Close()
	}
	if w.grammar != nil {
		w.grammar.Close()
	}
}

// modelRunner owns one backend context. Its goroutine admits queued work into
// free sequences and decodes, at each step, one batch that holds the next
// token of every generating sequence and prefill chunks of new prompts.
//
// Every sequence keeps the tokens of its last request in the KV cache (the
// prompt cache). New work takes the free sequence whose tokens share the
// longest prefix with its prompt and prefills only the rest; a longer prefix
// held by a busy sequence is shared through a KV sequence copy, and one still
// being prefilled is followed: its tokens are decoded once for both.
type modelRunner struct {
	llm       backend.Model
	ctx       backend.Context
	batch     backend.Batch
	embd      backend.EmbeddingBatch // for images, made when the first comes
	perSeq    int
	cells     int         // KV cells the slots share (Config.KVTokens)
	pending   *work       // dequeued, waiting for cells
	held      atomic.Bool // pending is set, for Stats
	ttl       time.Duration
	now       func() time.Time
	queue     chan *work
	quit      chan struct{}
	done      chan struct{}
	slots     []*slot
	share     bool  // sequences may share KV cells (backend.Model.SharesKV)
	admission int   // counts admissions, to prefill in arrival order
	seqBuf    []int // sequence ids of one token, reused
	log       *slog.Logger

	// branchSeqs are the sequences of Score's branches, beyond the
	// slots'; branchCells is the KV room kept for them (see score.go).
	branchSeqs  []int
	branchCells int

	// disk, when set, keeps prompt prefixes across restarts under the
	// model's key (see Config.CacheDir and prefixstore.go).
	disk              *runner.PrefixStore
	diskKey           string
	saveMin, saveLong int

	// Read by tests from other goroutines.
	steps   atomic.Int64 // decode steps run
	active  atomic.Int32 // slots serving a request
	decoded atomic.Int64 // prompt tokens decoded
}

// slot is one sequence of the context and the request it serves.
type slot struct {
	seq  int
	seqs []int // {seq}, kept to add tokens without allocating
	w    *work

	// cache holds the tokens in the KV cache at positions 0..len-1; used is
	// when they last served a request.
	cache []backend.Token
	used  time.Time

	// leader is a slot prefilling the same prompt prefix, up to shared:
	// its tokens there are decoded for this sequence too.
	leader *slot
	shared int

	order     int // admission number
	prefilled int // prompt tokens in the KV cache
	decoded   int // prompt tokens this request decoded itself
	pos       int // next position
	next      backend.Token
	idx       int // batch index of this step's logits, or -1
	generated int
	stopToken int

	out        *runner.Output
	text       strings.Builder
	reasoning  strings.Builder
	calls      []ToolCall
	logprobs   []TokenLogprob  // the answer tokens' entries, when asked for
	sentLP     int             // how many of them events have carried
	promptLPs  []TokenLogprob  // the prompt tokens' entries, when asked for
	promptIdx  []int           // batch index of each prompt position's logits, this step
	sentPrompt bool            // an event has carried promptLPs
	thought    int             // tokens generated inside a thinking section
	forced     []backend.Token // tokens to decode after next, unsampled

	admitted, first time.Time
	thinking        time.Duration
}

func newRunner(llm backend.Model, ctx backend.Context, perSeq int, cfg Config, disk *runner.PrefixStore, diskKey string) *modelRunner {
	r := &modelRunner{
		disk:    disk,
		diskKey: diskKey,
		saveMin: cfg.saveMin, saveLong: cfg.saveLong,
		share:  llm.SharesKV(),
		llm:    llm,
		ctx:    ctx,
		batch:  ctx.NewBatch(ctx.BatchSize()),
		perSeq: perSeq,
		cells:  cfg.slotCells(perSeq),
		ttl:    cfg.CacheTTL,
		now:    cfg.Now,
		queue:  make(chan *work, cfg.Queue),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
		log:    cfg.Logger,
	}
	for i := range cfg.Parallel {
		r.slots = append(r.slots, &slot{seq: i, seqs: []int{i}, idx: -1})
	}
	for i := range cfg.Branches {
		r.branchSeqs = append(r.branchSeqs, cfg.Parallel+i)
	}
	r.branchCells = cfg.BranchContext
	return r
}

// enqueue offers w to the runner without waiting; false means the queue is
// full.
func (r *modelRunner) enqueue(w *work) bool {
	select {
	case r.queue <- w:
		return true
	default:
		return false
	}
}

// stop ends the runner: running and queued requests fail with ErrClosed.
// The prompt cache's prefixes go to disk first, when it has one.
func (r *modelRunner) stop() {
	close(r.quit)
	<-r.done
	r.persist()
	r.batch.Close()
	if r.embd != nil {
		r.embd.Close()
	}
	r.ctx.Close()
}

func (r *modelRunner) run() {
	defer close(r.done)
	for {
		if !r.admit() {
			r.shutdown()
			return
		}
		r.reap()
		if !r.busy() {
			continue
		}
		r.scoreReady()
		if !r.busy() {
			continue
		}
		if err := r.step(); err != nil {
			r.log.Error("inference: decode failed", "err", err)
			for _, s := range r.slots {
				if s.w != nil {
					r.release(s, nil, err)
				}
			}
			// What the failed batch wrote is unknown: forget every cache.
			r.ctx.Clear()
			for _, s := range r.slots {
				s.cache = s.cache[:0]
			}
		}
	}
}

func (r *modelRunner) busy() bool {
	for _, s := range r.slots {
		if s.w != nil {
			return true
		}
	}
	return false
}

// admit moves queued work into free slots. With nothing running it waits
// for work; it returns false when the runner must stop.
func (r *modelRunner) admit() bool {
	for {
		if !r.hasFree() {
			select {
			case <-r.quit:
				return false
			default:
				return true
			}
		}
		w := r.pending
		switch {
		case w != nil:
			select {
			case <-r.quit:
				return false
			default:
			}
		case r.busy():
			select {
			case w = <-r.queue:
			case <-r.quit:
				return false
			default:
				return true
			}
		default:
			select {
			case w = <-r.queue:
			case <-r.quit:
				return false
			}
		}
		r.pending = nil
		r.held.Store(false)
		if w.job.abandoned() {
			w.close()
			w.job.finish(nil, w.job.cause())
			continue
		}
		if !r.room(w) {
			// Requests at work hold the cells: w waits for one to end,
			// ahead of the queue.
			r.pending = w
			r.held.Store(true)
			return true
		}
		r.start(w)
	}
}

// reserve is the KV cells w may come to hold: its prompt and output limit,
// or, for scoring, a whole context, whose part beyond the prefix its
// branches may use (branchRoom).
func (r *modelRunner) reserve(w *work) int {
	if w.score != nil {
		return r.perSeq
	}
	return len(w.prompt) + w.maxTokens
}

// room reports whether the cells leave room to start w: those reserved by
// the requests at work and held by idle sequences' caches, counted apart
// even where sequences share them. Idle caches give up their cells, least
// recently used first, until w fits. With nothing at work it always fits:
// a request never reserves more than the cells (Prepare checks).
func (r *modelRunner) room(w *work) bool {
	used := 0
	var idle []*slot
	for _, s := range r.slots {
		if s.w != nil {
			used += r.reserve(s.w)
		} else if len(s.cache) > 0 {
			used += len(s.cache)
			idle = append(idle, s)
		}
	}
	need := r.reserve(w)
	if used+need <= r.cells {
		return true
	}
	slices.SortFunc(idle, func(a, b *slot) int { return a.used.Compare(b.used) })
	for _, s := range idle {
		if used+need <= r.cells {
			break
		}
		r.ctx.ClearSequence(s.seq)
		used -= len(s.cache)
		s.cache = s.cache[:0]
	}
	return used+need <= r.cells
}

func (r *modelRunner) hasFree() bool {
	for _, s := range r.slots {
		if s.w == nil {
			return true
		}
	}
	return false
}

// start places w in the free slot that holds the longest prefix of its
// prompt (the least recently used one when none does), and takes what it
// can of the prompt from the KV cache.
func (r *modelRunner) start(w *work) {
	now := r.now()
	// At least the last prompt token is decoded: its logits start the
	// output. A scoring prefix needs no logits: it may come whole from the
	// cache.
	limit := len(w.prompt) - 1
	if w.score != nil {
		limit = len(w.prompt)
	}
	// Log-probabilities are read from logits, whose last bits depend on
	// the shape of the batch the prompt was decoded in: a request that
	// asks for them decodes its whole prompt, so that the same request
	// gets the same values whatever the cache holds.
	cached := limit
	if w.logprobs || w.promptLP {
		cached = 0
	}
	var s *slot
	reuse := -1
	for _, c := range r.slots {
		if c.w != nil {
			continue
		}
		if len(c.cache) > 0 && now.Sub(c.used) > r.ttl {
			r.ctx.ClearSequence(c.seq)
			c.cache = c.cache[:0]
		}
		n := runner.Reusable(c.cache, w.prompt, cached)
		if s == nil || n > reuse || n == reuse && c.used.Before(s.used) {
			s, reuse = c, n
		}
	}
	// A busy sequence may hold more of the prompt already decoded, or be
	// about to decode it.
	var src, leader *slot
	copied, shared := reuse, reuse
	for _, b := range r.slots {
		if b.w == nil || !r.share {
			continue
		}
		if n := runner.Reusable(b.cache, w.prompt, cached); n > copied {
			src, copied = b, n
		}
		if b.prefilled < len(b.w.prompt) && b.leader == nil {
			if n := runner.Reusable(b.w.prompt, w.prompt, limit); n > shared {
				leader, shared = b, n
			}
		}
	}
	cache := s.cache[:reuse]
	if n := r.restore(s, w, max(reuse, copied), cached); n >= 0 {
		// The slot's sequence now holds n tokens from disk (none when
		// the entry failed).
		reuse, src = n, nil
		cache = s.cache[:n]
	}
	if src != nil {
		r.ctx.ClearSequence(s.seq)
		if err := r.ctx.CopyTokens(src.seq, s.seq, 0, runner.PosAt(w.images, copied)); err != nil {
			r.log.Error("inference: sharing a prompt prefix", "err", err)
			copied = 0
		}
		cache = append(s.cache[:0], w.prompt[:copied]...)
	} else if at := runner.PosAt(w.images, reuse); !r.ctx.RemoveTokens(s.seq, at, -1) || r.ctx.MaxPos(s.seq) != at-1 {
		// The memory could not keep exactly the prefix (a recurrent
		// state): start afresh.
		r.ctx.ClearSequence(s.seq)
		cache = cache[:0]
	}
	r.admission++
	r.active.Add(1)
	*s = slot{
		seq: s.seq, seqs: s.seqs, w: w, cache: cache, used: now,
		idx: -1, order: r.admission, out: newOutput(w.family, w.stops, w.tools, w.thinking), admitted: time.Now(),
	}
	s.prefilled, s.pos = len(cache), runner.PosAt(w.images, len(cache))
	if w.promptLP {
		s.promptLPs = make([]TokenLogprob, 0, len(w.prompt))
		s.promptLPs = append(s.promptLPs, TokenLogprob{Token: int(w.prompt[0]), Bytes: r.llm.Piece(w.prompt[0], false)})
	}
	// Follow a leader that is still prefilling and is exactly where this
	// sequence now is: its next tokens are this prompt's next tokens.
	if leader != nil && shared > s.prefilled && leader.prefilled == s.prefilled && !w.promptLP {
		s.leader, s.shared = leader, shared
	}
	r.snapshot(s) // a prefix reused, if it is long enough
}

// restoreGain is the fewest tokens a saved prefix must add to what memory
// gives for restoring it to be worth reading its file.
const restoreGain = 32

// restore puts into s's sequence the saved prefix that shares the most of
// w's prompt, up to limit tokens, when that is restoreGain more than have,
// what memory gives. It returns the tokens restored, which s.cache holds,
// or -1 when it left the slot as it was. A state that the backend
// refuses leaves the sequence empty: 0 (then w is prefilled cold).
func (r *modelRunner) restore(s *slot, w *work, have, limit int) int {
	if r.disk == nil || len(w.images) > 0 || limit < have+restoreGain {
		return -1 // nothing, or nothing longer than memory's, can come
	}
	// The most a state can take for this context bounds what is read.
	most := backend.SequenceStateLimit(r.ctx)
	if most <= 0 {
		return -1
	}
	// An entry longer than the prompt takes free cells for a moment:
	// where there are too few, the backend refuses it, and the entry is
	// kept. One that fails the store's check (its file, its checksum) or
	// whose state the backend refuses as not its model's (bit rot under
	// a sound checksum, another program's file) is removed, said so once,
	// and the next best tried; each try removes one, so this ends.
	var e *runner.StoredPrefix
	var n int
	tried := false // a refused state has emptied the sequence
	for {
		if e, n = r.disk.Longest(r.diskKey, w.prompt, limit, r.perSeq, r.share); e == nil || n < have+restoreGain {
			if tried {
				return 0
			}
			return -1
		}
		state, err := r.disk.Load(e, most)
		if err != nil {
			continue
		}
		tried = true
		s.cache = s.cache[:0]
		err = r.ctx.SetSequenceState(s.seq, state)
		if err == nil {
			break
		}
		if !errors.Is(err, backend.ErrBadState) {
			r.log.Warn("inference: restoring a saved prompt prefix", "path", e.Path, "err", err)
			return 0
		}
		r.disk.Reject(e.Path, err)
	}
	if !r.ctx.RemoveTokens(s.seq, n, -1) || r.ctx.MaxPos(s.seq) != n-1 {
		r.ctx.ClearSequence(s.seq)
		return 0
	}
	s.cache = append(s.cache, e.Tokens[:n]...)
	r.log.Debug("inference: restored a saved prompt prefix", "tokens", n)
	return n
}

// snapshot saves the tokens in s's sequence to disk in the background,
// when there is a disk, they are at least saveMin, hold no image, and no
// entry holds them yet, and no other save is under way.
func (r *modelRunner) snapshot(s *slot) {
	if r.disk == nil || r.disk.Busy() || !r.worthSaving(s) {
		return
	}
	if state := r.state(s); state != nil {
		r.disk.SaveAsync(r.diskKey, slices.Clone(s.cache), state)
	}
}

// state is the state of s's sequence, or nil (logged) when llama.cpp
// cannot give it.
func (r *modelRunner) state(s *slot) []byte {
	state, err := r.ctx.SequenceState(s.seq)
	switch {
	case errors.Is(err, backend.ErrUnsupported):
		// The backend cannot save a sequence (Ollama's Go engine): the
		// model keeps its prompt cache in memory only.
		r.log.Info("inference: the prompt cache on disk is off for this model", "backend", r.llm.Backend(), "why", err)
		r.disk = nil
	case err != nil:
		r.log.Warn("inference: reading a prompt prefix to save", "err", err)
	}
	return state
}

func (r *modelRunner) worthSaving(s *slot) bool {
	return len(s.cache) >= r.saveMin && !slices.ContainsFunc(s.cache, func(t backend.Token) bool { return t < 0 }) &&
		!r.disk.Covered(r.diskKey, s.cache, r.share) && int64(r.ctx.SequenceStateSize(s.seq)) <= r.disk.Limit()
}

// persist saves the prefixes that the sequences hold, once the runner has
// stopped, and waits for the writes.
func (r *modelRunner) persist() {
	if r.disk == nil {
		return
	}
	r.disk.Flush()
	for _, s := range r.slots {
		if r.disk == nil || !r.worthSaving(s) { // state may turn the disk off
			continue
		}
		if state := r.state(s); state != nil {
			r.disk.Save(r.diskKey, slices.Clone(s.cache), state)
		}
	}
}

// reap frees the slots whose readers have gone.
func (r *modelRunner) reap() {
	for _, s := range r.slots {
		if s.w != nil && s.w.job.abandoned() {
			r.release(s, nil, s.w.job.cause())
		}
	}
}

// step decodes one batch: the pending token of every generating sequence
// first, then prompt chunks of prefilling ones in arrival order, as far as
// the batch holds. A chunk's tokens also carry the sequences that follow
// it.
func (r *modelRunner) step() error {
	if err := r.prefillImages(); err != nil {
		return err
	}
	b := r.batch
	b.Clear()
	for _, s := range r.slots {
		if s.w == nil || s.w.score != nil || s.prefilled < len(s.w.prompt) {
			continue
		}
		if b.Len()+1+len(s.forced) > b.Cap() {
			continue // no room this step: it is tried again in the next
		}
		// The sampled token, then any forced ones: the output is read
		// after the last.
		for i, t := range append([]backend.Token{s.next}, s.forced...) {
			last := i == len(s.forced)
			idx, err := b.Add(t, s.pos, s.seqs, last)
			if err != nil {
				return err
			}
			if last {
				s.idx = idx
			}
			s.pos++
			s.cache = append(s.cache, t)
		}
		s.forced = nil
	}
	scored := 0 // prompt tokens of PromptLogprobs requests in the batch
	for s := r.nextPrefill(); s != nil && b.Len() < b.Cap(); s = r.nextPrefill() {
		// Text only: an image waits for the next step's prefillImages.
		n := min(b.Cap()-b.Len(), s.textUntil()-s.prefilled)
		if s.w.promptLP {
			// Each scored token's logits are an output row of the whole
			// vocabulary, which llama.cpp holds for the batch: bound them.
			if n = min(n, maxScoredPerStep-scored); n == 0 {
				break
			}
			scored += n
		}
		for k := range n {
			p := s.prefilled + k
			last := p == len(s.w.prompt)-1 && s.w.score == nil && !s.w.noOutput
			predicts := s.w.promptLP && p+1 < len(s.w.prompt) // its logits score the next token
			idx, err := b.Add(s.w.prompt[p], runner.PosAt(s.w.images, p), r.seqsAt(s, p), last || predicts)
			if err != nil {
				return err
			}
			if last {
				s.idx = idx
			}
			if predicts {
				s.promptIdx = append(s.promptIdx, idx)
			}
		}
		r.prefilled(s, n)
	}
	r.steps.Add(1)
	if err := r.ctx.Decode(b); err != nil {
		return err
	}
	for _, s := range r.slots {
		if s.w != nil && len(s.promptIdx) > 0 {
			r.promptLogprobs(s)
		}
		if s.w != nil && s.w.noOutput && s.prefilled == len(s.w.prompt) {
			r.finish(s, FinishLength, "")
			continue
		}
		if s.w != nil && s.idx >= 0 && s.generated == 0 && s.decoded >= r.saveLong && !s.w.logprobs && !s.w.promptLP {
			r.snapshot(s) // a long prompt, all in the KV cache now
		}
		if s.w != nil && s.idx >= 0 {
			g := s.w.grammar
			if s.out.Thinking() {
				g = nil // the grammar constrains the answer only
			}
			tok := s.w.sampler.Sample(r.ctx, s.idx, g)
			if tok < 0 {
				s.idx = -1
				err := fmt.Errorf("%w: the output's grammar admits no further token", ErrInvalidRequest)
				if g == nil {
					// Not the request's doing: the model's logits were
					// missing or none was a number.
					err = errors.New("inference: the model gave no token to sample")
				}
				r.release(s, nil, err)
				continue
			}
			// Thinking tokens keep no entry (push): none is computed.
			var lp *TokenLogprob
			if !s.out.Thinking() {
				lp = r.logprob(s, tok)
			}
			s.idx = -1
			r.emit(s, tok, lp)
		}
	}
	return nil
}

// maxScoredPerStep bounds the prompt tokens of a PromptLogprobs request
// decoded in one step, whose logits llama.cpp keeps for the batch: 64 rows
// of a 151,936-token vocabulary are 39 MB.
const maxScoredPerStep = 64

// nextPrefill is the earliest admitted slot whose prompt is not yet all in
// the KV cache, that follows no leader, and whose next prompt tokens are
// text.
func (r *modelRunner) nextPrefill() *slot {
	var best *slot
	for _, s := range r.slots {
		if s.w != nil && s.leader == nil && s.prefilled < s.textUntil() && (best == nil || s.order < best.order) {
			best = s
		}
	}
	return best
}

// textUntil is where the text from the slot's next prompt token ends: the
// start of the next image, or the end of the prompt.
func (s *slot) textUntil() int {
	for _, sp := range s.w.images {
		if sp.Start >= s.prefilled {
			return sp.Start
		}
	}
	return len(s.w.prompt)
}

// seqsAt returns the sequences that take leader s's prompt token at p: its
// own and those of the slots that follow it there, which count the token as
// theirs.
func (r *modelRunner) seqsAt(s *slot, p int) []int {
	seqs := append(r.seqBuf[:0], s.seq)
	for _, f := range r.slots {
		if f.w != nil && f.leader == s && p == f.prefilled && p < f.shared {
			seqs = append(seqs, f.seq)
			f.cache = append(f.cache, s.w.prompt[p])
			f.prefilled++
			f.pos = runner.PosAt(f.w.images, f.prefilled)
			if f.prefilled == f.shared {
				f.leader = nil
			}
		}
	}
	r.seqBuf = seqs
	return seqs
}

// prefilled records that the next n prompt tokens of s are in the batch.
func (r *modelRunner) prefilled(s *slot, n int) {
	s.cache = append(s.cache, s.w.prompt[s.prefilled:s.prefilled+n]...)
	s.prefilled += n
	s.decoded += n
	s.pos = runner.PosAt(s.w.images, s.prefilled)
	r.decoded.Add(int64(n))
}

// prefillImages decodes, in admission order, the image of every slot whose
// prompt is in the KV cache up to an image: each in batches of its own,
// since a batch holds tokens or embeddings, not both. Attention is causal
// unless the projector wants an image read whole (the engine checked that
// it fits one batch).
func (r *modelRunner) prefillImages() error {
	for {
		var s *slot
		var sp runner.ImageSpan
		for _, c := range r.slots {
			if c.w == nil || c.leader != nil || s != nil && c.order > s.order {
				continue
			}
			for _, img := range c.w.images {
				if img.Start == c.prefilled {
					s, sp = c, img
				}
			}
		}
		if s == nil {
			return nil
		}
		// Only a backend that decodes embeddings has a projector
		// (attachProjector).
		ectx, ok := r.ctx.(backend.EmbeddingContext)
		if !ok {
			return fmt.Errorf("inference: %w; they need llama.cpp", backend.Unsupported(r.llm.Backend(), "images"))
		}
		if r.embd == nil {
			r.embd = ectx.NewEmbeddingBatch(r.ctx.BatchSize())
		}
		if sp.Whole {
			ectx.SetCausal(false)
		}
		for s.prefilled < sp.End() {
			b := r.embd
			b.Clear()
			n := min(b.Cap(), sp.End()-s.prefilled)
			at := runner.PosAt(s.w.images, sp.Start)
			for k := range n {
				p := s.prefilled + k
				row, seqs := sp.Rows.Row(p-sp.Start), r.seqsAt(s, p)
				var err error
				if x := sp.Rows.GridX; x > 0 {
					_, err = b.AddGridEmbedding(row, at, (p-sp.Start)/x, (p-sp.Start)%x, seqs)
				} else {
					_, err = b.AddEmbedding(row, at+p-sp.Start, seqs, false)
				}
				if err != nil {
					return err
				}
			}
			r.steps.Add(1)
			if err := r.ctx.Decode(b); err != nil {
				ectx.SetCausal(true)
				return err
			}
			r.prefilled(s, n)
		}
		if sp.Whole {
			ectx.SetCausal(true)
		}
	}
}

// logprob returns the entry of tok, sampled from the logits at s.idx,
// when the request asked for log-probabilities; nil otherwise.
func (r *modelRunner) logprob(s *slot, tok backend.Token) *TokenLogprob {
	if !s.w.logprobs {
		return nil
	}
	lp := r.entry(s.idx, tok, s.w.top)
	return &lp
}

// promptLogprobs records the entries of the prompt tokens that the logits
// of this step's prompt positions predict.
func (r *modelRunner) promptLogprobs(s *slot) {
	for _, idx := range s.promptIdx {
		tok := s.w.prompt[len(s.promptLPs)]
		s.promptLPs = append(s.promptLPs, r.entry(idx, tok, s.w.top))
	}
	s.promptIdx = s.promptIdx[:0]
}

// entry is the log-probability entry of tok under the logits at batch
// index idx, with the top most likely tokens.
func (r *modelRunner) entry(idx int, tok backend.Token, top int) TokenLogprob {
	logits := r.ctx.Logits(idx)
	lse := backend.LogSumExp(r.ctx, logits)
	lp := TokenLogprob{Token: int(tok), Bytes: r.llm.Piece(tok, false), Logprob: float64(logits[tok]) - lse}
	for _, id := range runner.TopTokens(logits, top) {
		lp.Top = append(lp.Top, TopLogprob{Token: id, Bytes: r.llm.Piece(backend.Token(id), false), Logprob: float64(logits[id]) - lse})
	}
	return lp
}

// emit handles a sampled token and its log-probability entry (nil when
// not asked for): the end of the turn, reasoning and text through the
// output parser, the thinking budget, the token limit.
func (r *modelRunner) emit(s *slot, tok backend.Token, lp *TokenLogprob) {
	if s.generated == 0 {
		s.first = time.Now()
	}
	s.generated++
	if r.llm.IsEOG(tok) {
		if s.w.grammar != nil && s.out.Thinking() && len(s.w.thinkClose) > 0 && s.generated-1+len(s.w.thinkClose) < s.w.maxTokens {
			// A constrained answer must follow: ending the turn while
			// thinking closes the thinking section instead.
			s.next, s.forced = s.w.thinkClose[0], s.w.thinkClose[1:]
			for _, t := range s.w.thinkClose {
				r.push(s, t, nil)
			}
			s.generated += len(s.forced)
			return
		}
		s.stopToken = int(tok)
		r.finish(s, FinishStop, "")
		return
	}
	p := r.push(s, tok, lp)
	switch {
	case p.Stopped:
		r.finish(s, FinishStopSequence, p.Stop)
	case p.Ended: // a family stop: the end of the turn
		s.stopToken = int(tok)
		r.finish(s, FinishStop, "")
	case s.w.single && len(s.calls) > 0:
		r.finish(s, FinishToolCalls, "") // one call, and the turn is over
	case s.generated >= s.w.maxTokens:
		r.finish(s, FinishLength, "")
	case s.out.Thinking() && s.w.budget >= 0 && s.thought >= s.w.budget && len(s.w.thinkClose) > 0 &&
		s.generated+len(s.w.thinkClose) >= s.w.maxTokens:
		r.finish(s, FinishLength, "") // no room left to close the thinking and answer
	default:
		s.next = tok
		if s.out.Thinking() && s.w.budget >= 0 && s.thought >= s.w.budget && len(s.w.thinkClose) > 0 {
			// The budget is spent: close the section, and the model
			// answers. The closing tokens count as output.
			s.forced = s.w.thinkClose
			for _, t := range s.forced {
				s.generated++
				r.push(s, t, nil)
			}
		}
	}
}

// push runs the bytes of one generated token through the slot's output and
// sends what it releases. The token's log-probability entry, if any, is
// kept when the token is part of the answer: neither thinking nor the
// markers that open and close it.
func (r *modelRunner) push(s *slot, tok backend.Token, lp *TokenLogprob) runner.Piece {
	was := s.out.Thinking()
	// A family's parser reads its markers (<tool_call>, <|channel|>),
	// which may be control tokens: their text is passed on. Plain text
	// shows none.
	p := s.out.Push(r.llm.Piece(tok, s.w.family != nil))
	if was || s.out.Thinking() {
		s.thought++
	} else if lp != nil && !p.Ended { // a family stop is the end-of-turn token
		s.logprobs = append(s.logprobs, *lp)
	}
	if was && !s.out.Thinking() {
		s.thinking = time.Since(s.first)
	}
	r.send(s, p, p.Stopped)
	return p
}

// send passes what the output released on to the reader, its tool calls
// with the ids the engine gives them; last says the output has ended.
func (r *modelRunner) send(s *slot, p runner.Piece, last bool) {
	ev := Event{Text: p.Text, Reasoning: p.Reasoning}
	if len(p.Calls) > 0 {
		ev.ToolCalls = toolCalls(p.Calls)
	}
	if s.w.single && len(s.calls)+len(ev.ToolCalls) > 1 {
		ev.ToolCalls = ev.ToolCalls[:max(0, 1-len(s.calls))] // one call at most
	}
	unsent := s.sentLP < len(s.logprobs) || s.promptLPs != nil && !s.sentPrompt
	if ev.Text == "" && ev.Reasoning == "" && len(ev.ToolCalls) == 0 && !(last && unsent) {
		return // entries wait for text, except at the end
	}
	if s.promptLPs != nil && !s.sentPrompt {
		ev.PromptLogprobs, s.sentPrompt = s.promptLPs, true
	}
	if s.sentLP < len(s.logprobs) {
		ev.Logprobs = slices.Clip(s.logprobs[s.sentLP:])
		s.sentLP = len(s.logprobs)
	}
	s.text.WriteString(ev.Text)
	s.reasoning.WriteString(ev.Reasoning)
	s.calls = append(s.calls, ev.ToolCalls...)
	s.w.job.send(ev)
}

func (r *modelRunner) finish(s *slot, reason FinishReason, stop string) {
	if reason != FinishStopSequence {
		r.send(s, s.out.Flush(reason == FinishLength), true)
	}
	if len(s.calls) > 0 && reason == FinishStop {
		reason = FinishToolCalls
	}
	now := time.Now()
	if s.generated == 0 {
		s.first = now // nothing generated: the prefill ran to the end
	}
	res := &Result{
		Text:           s.text.String(),
		Reasoning:      s.reasoning.String(),
		FinishReason:   reason,
		StopSequence:   stop,
		StopToken:      s.stopToken,
		ToolCalls:      s.calls,
		Logprobs:       s.logprobs,
		PromptLogprobs: s.promptLPs,
		Usage: Usage{
			PromptTokens:     len(s.w.prompt),
			CachedTokens:     len(s.w.prompt) - s.decoded,
			CompletionTokens: s.generated,
			ReasoningTokens:  s.thought,
		},
		Timings: Timings{
			Queued:   s.admitted.Sub(s.w.job.enqueued),
			Prefill:  s.first.Sub(s.admitted),
			Decode:   now.Sub(s.first),
			Thinking: s.thinking,
		},
	}
	r.release(s, res, nil)
}

// release ends the slot's request with res or err and frees the slot. Its
// tokens stay in the KV cache for the next request that shares them;
// sequences that followed it go on by themselves.
func (r *modelRunner) release(s *slot, res *Result, err error) {
	// The cache's age counts from before the caller hears of the end: a
	// caller that waits out the TTL and comes back finds it expired.
	s.used = r.now()
	s.w.close()
	// The count drops before the caller hears of the end, so that what a
	// caller reads of Stats after a response counts it no more.
	r.active.Add(-1)
	s.w.job.finish(res, err)
	s.w = nil
	s.leader = nil
	s.text.Reset()
	s.reasoning.Reset()
	s.calls = nil
	s.logprobs, s.sentLP, s.promptLPs, s.promptIdx, s.sentPrompt = nil, 0, nil, nil, false
	for _, f := range r.slots {
		if f.leader == s {
			f.leader = nil
		}
	}
}

// shutdown fails every running and queued request with ErrClosed.
func (r *modelRunner) shutdown() {
	for _, s := range r.slots {
		if s.w != nil {
			r.release(s, nil, ErrClosed)
		}
	}
	if w := r.pending; w != nil {
		r.pending = nil
		r.held.Store(false)
		w.close()
		w.job.finish(nil, ErrClosed)
	}
	for {
		select {
		case w := <-r.queue:
			w.close()
			w.job.finish(nil, ErrClosed)
		default:
			return
		}
	}
}
