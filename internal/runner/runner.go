package runner

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/family"
)

// Runner decodes the work of one model on one backend context. It is safe
// for concurrent use; whoever calls New calls Stop.
//
// It owns the context. Its goroutine admits queued work into
// free sequences and decodes, at each step, one batch that holds the next
// token of every generating sequence and prefill chunks of new prompts.
//
// Every sequence keeps the tokens of its last request in the KV cache (the
// prompt cache). New work takes the free sequence whose tokens share the
// longest prefix with its prompt and prefills only the rest; a longer prefix
// held by a busy sequence is shared through a KV sequence copy, and one still
// being prefilled is followed: its tokens are decoded once for both. On a
// recurrent model, whose memory cannot be cut back, the prefix kept is
// the longest that a checkpoint of the sequence's state reaches
// (Config.CheckpointBytes).
type Runner struct {
	llm       backend.Model
	ctx       backend.Context
	batch     backend.Batch
	embd      backend.EmbeddingBatch // for images, made when the first comes
	perSeq    int
	cells     int         // KV cells the slots share (Config.Cells)
	pending   *Work       // dequeued, waiting for cells
	held      atomic.Bool // pending is set, for Stats
	ttl       time.Duration
	now       func() time.Time
	queue     chan *Work
	quit      chan struct{} // closed by Stop
	done      chan struct{} // closed when run returns
	closed    chan struct{} // closed when Stop has closed the context
	stopMu    sync.Mutex    // orders Submit and Stop
	stopped   bool
	slots     []*slot
	share     bool  // sequences may share KV cells (backend.Model.SharesKV)
	rollback  int   // recurrent memory: the last positions a Decode lets go (backend.RollbackLimit)
	admission int   // counts admissions, to prefill in arrival order
	seqBuf    []int // sequence ids of one token, reused
	log       *slog.Logger

	// branchSeqs are the sequences of Score's branches, beyond the
	// slots'; branchCells is the KV room kept for them (see score.go).
	branchSeqs  []int
	branchCells int

	// disk, when set, keeps prompt prefixes across restarts under the
	// model's key (see Config.Disk and prefixstore.go).
	disk              *PrefixStore
	diskKey           string
	saveMin, saveLong int

	// ckpt keeps checkpoints of a recurrent model's sequences (see
	// checkpoint.go); nil for other models.
	ckpt *checkpoints
	// drafter, when set, proposes tokens to verify, up to maxDraft a
	// step (draft.go).
	drafter  Drafter
	maxDraft int
	// holding defers the ends of work released during a step's sampling
	// into ends, called once the step's drafts are settled.
	holding bool
	ends    []func()

	// Read by Stats from other goroutines.
	steps   atomic.Int64 // decode steps run
	active  atomic.Int32 // slots serving a request
	decoded atomic.Int64 // prompt tokens decoded
	// drafted and accepted count drafted tokens (draft.go).
	drafted, accepted atomic.Int64
}

// slot is one sequence of the context and the request it serves.
type slot struct {
	seq  int
	seqs []int // {seq}, kept to add tokens without allocating
	w    *Work

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

	out        *Output
	text       strings.Builder
	reasoning  strings.Builder
	calls      []family.Call
	logprobs   []Logprob       // the answer tokens' entries, when asked for
	sentLP     int             // how many of them events have carried
	promptLPs  []Logprob       // the prompt tokens' entries, when asked for
	promptIdx  []int           // batch index of each prompt position's logits, this step
	sentPrompt bool            // an event has carried promptLPs
	thought    int             // tokens generated inside a thinking section
	forced     []backend.Token // tokens to decode after next, unsampled
	think      int             // where the prompt's thinking starts, for a checkpoint; 0: none
	callCut    bool            // Work.MaxCall ended the work
	spec       speculation     // drafting (draft.go)

	admitted, first time.Time
	thinking        time.Duration
}

// Config is how a Runner decodes. Its zero value is not usable: New
// needs Sequences, Context, Cells and Now at least.
type Config struct {
	// Sequences are the parallel sequences (slots) that work takes, ids
	// 0 to Sequences-1 of the context; Branches more, after them, decode
	// the branches of scoring work, in BranchCells KV cells of their own.
	Sequences, Branches int
	BranchCells         int
	// Context is the tokens one sequence holds; Cells the KV cells the
	// slots share.
	Context, Cells int
	// Queue is how much work may wait for a sequence.
	Queue int
	// TTL is how long an idle sequence's tokens stay reusable.
	TTL    time.Duration
	Now    func() time.Time
	Logger *slog.Logger

	// Disk, when set, keeps prompt prefixes across restarts under
	// DiskKey: those of at least SaveMin tokens as work reuses them, and
	// prompts of SaveLong tokens once decoded whole.
	Disk              *PrefixStore
	DiskKey           string
	SaveMin, SaveLong int

	// CheckpointBytes bounds the memory that checkpoints of the
	// sequences' recurrent state take, on a model that has one (its
	// context is a backend.Checkpointer): they let work reuse a prefix of
	// what a sequence holds, which such a memory cannot cut back to.
	// 0 keeps none. CheckpointEvery is how often a long prompt is
	// checkpointed, in tokens, besides the end of each prompt and turn;
	// 0: only there.
	CheckpointBytes int64
	CheckpointEvery int
	// Drafter, when set, proposes tokens after those of Speculative
	// work, which each step verifies (speculative decoding, draft.go);
	// the runner closes it when it stops. MaxDraft bounds the tokens
	// drafted per step; 0 is DefaultMaxDraft.
	Drafter  Drafter
	MaxDraft int
}

// New starts a runner on ctx, a context of llm with Sequences+Branches
// sequences, which it owns from then on: Stop closes it.
func New(llm backend.Model, ctx backend.Context, cfg Config) *Runner {
	r := &Runner{
		disk:     cfg.Disk,
		diskKey:  cfg.DiskKey,
		saveMin:  cfg.SaveMin,
		saveLong: cfg.SaveLong,
		share:    llm.SharesKV(),
		llm:      llm,
		ctx:      ctx,
		batch:    ctx.NewBatch(ctx.BatchSize()),
		perSeq:   cfg.Context,
		cells:    cfg.Cells,
		ttl:      cfg.TTL,
		now:      cfg.Now,
		queue:    make(chan *Work, cfg.Queue),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
		closed:   make(chan struct{}),
		log:      cfg.Logger,
		drafter:  cfg.Drafter,
		maxDraft: cfg.MaxDraft,
	}
	if r.maxDraft <= 0 {
		r.maxDraft = DefaultMaxDraft
	}
	if !r.share {
		r.rollback = backend.RollbackLimit(ctx)
		r.maxDraft = min(r.maxDraft, r.rollback)
	}
	for i := range cfg.Sequences {
		r.slots = append(r.slots, &slot{seq: i, seqs: []int{i}, idx: -1})
	}
	for i := range cfg.Branches {
		r.branchSeqs = append(r.branchSeqs, cfg.Sequences+i)
	}
	r.branchCells = cfg.BranchCells
	r.ckpt = newCheckpoints(llm, ctx, cfg.CheckpointBytes, cfg.CheckpointEvery, cfg.Logger)
	go r.run()
	return r
}

// Submit queues w without waiting: it fails with ErrQueueFull when the
// queue is full, and with ErrClosed once the runner has stopped; then the
// caller keeps w (and closes it). Otherwise the runner owns w.
func (r *Runner) Submit(w *Work) error {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	if r.stopped {
		return ErrClosed
	}
	select {
	case r.queue <- w:
		return nil
	default:
		return ErrQueueFull
	}
}

// Stop ends the runner: running and queued work fails with ErrClosed.
// The prompt cache's prefixes go to disk first, when it has one; then the
// backend context is closed. Calls after the first wait for it to end.
func (r *Runner) Stop() {
	r.stopMu.Lock()
	first := !r.stopped
	if first {
		// Under stopMu: what Submit queued before is in the queue, where
		// shutdown finds it, and nothing comes after.
		r.stopped = true
		close(r.quit)
	}
	r.stopMu.Unlock()
	<-r.done
	if !first {
		<-r.closed
		return
	}
	r.persist()
	r.batch.Close()
	if r.embd != nil {
		r.embd.Close()
	}
	r.ctx.Close()
	if r.drafter != nil {
		r.drafter.Close()
	}
	close(r.closed)
}

// Stats are a runner's counters: the work waiting for a sequence (or for
// KV cells), the sequences at work and of all, the decode steps run and
// the prompt tokens decoded since New, and the tokens drafted and
// accepted (Config.Drafter).
type Stats struct {
	Queued, Active, Sequences int
	Steps, Decoded            int64
	Drafted, Accepted         int64
}

// Stats reads the runner's counters and takes no lock that a decode step
// holds; they may be a step stale.
func (r *Runner) Stats() Stats {
	st := Stats{Queued: len(r.queue), Active: int(r.active.Load()), Sequences: len(r.slots),
		Steps: r.steps.Load(), Decoded: r.decoded.Load(), Drafted: r.drafted.Load(), Accepted: r.accepted.Load()}
	if r.held.Load() {
		st.Queued++ // waiting for KV cells
	}
	return st
}

// QueueCap is how much work may wait (Config.Queue).
func (r *Runner) QueueCap() int { return cap(r.queue) }

// SharesKV reports whether sequences share KV cells
// (backend.Model.SharesKV): a prefix that one holds is copied to another.
func (r *Runner) SharesKV() bool { return r.share }

// Checkpoints reports whether the runner keeps checkpoints of a recurrent
// memory (the backend's Checkpointer and Config.CheckpointBytes), so
// that a prompt sharing only part of a sequence's tokens reuses them.
func (r *Runner) Checkpoints() bool { return r.ckpt != nil }

// Cache returns the tokens that sequence i holds in the KV cache: its
// last work's prompt and output. Call it only while no work runs.
func (r *Runner) Cache(i int) []backend.Token { return slices.Clone(r.slots[i].cache) }

// MaxPos is the last position that sequence i holds in the backend
// context, -1 when none. Call it only while no work runs.
func (r *Runner) MaxPos(i int) int { return r.ctx.MaxPos(i) }

// run is the runner's goroutine, from New to Stop.
func (r *Runner) run() {
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
			r.log.Error("runner: decode failed", "err", err)
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

func (r *Runner) busy() bool {
	for _, s := range r.slots {
		if s.w != nil {
			return true
		}
	}
	return false
}

// admit moves queued work into free slots. With nothing running it waits
// for work; it returns false when the runner must stop.
func (r *Runner) admit() bool {
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
		if w.Job.abandoned() {
			w.Close()
			w.Job.finish(nil, w.Job.cause())
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
func (r *Runner) reserve(w *Work) int {
	if w.Score != nil {
		return r.perSeq
	}
	return len(w.Prompt) + w.MaxTokens
}

// room reports whether the cells leave room to start w: those reserved by
// the requests at work and held by idle sequences' caches, counted apart
// even where sequences share them, less the prefix of w's prompt that an
// idle cache holds, which w takes over or copies rather than decodes
// anew (on attention models, for prompts without images that take their
// prompt from the cache: see start). Idle caches
// give up their cells, least recently used first and the one holding
// that prefix last, until w fits. With nothing at work it always fits:
// work never reserves more than the cells (its caller checks, as
// inference.Engine.Prepare does).
func (r *Runner) room(w *Work) bool {
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
	var keep *slot
	kept := 0
	if w.Score == nil && r.ckpt == nil && len(w.Images) == 0 && !w.Logprobs && !w.PromptLP {
		for _, s := range idle {
			if n := Reusable(s.cache, w.Prompt, len(w.Prompt)-1); n > kept {
				keep, kept = s, n
			}
		}
	}
	need := r.reserve(w) - kept
	if used+need <= r.cells {
		return true
	}
	slices.SortFunc(idle, func(a, b *slot) int {
		switch {
		case a == keep:
			return 1
		case b == keep:
			return -1
		}
		return a.used.Compare(b.used)
	})
	for _, s := range idle {
		if used+need <= r.cells {
			break
		}
		r.ctx.ClearSequence(s.seq)
		used -= len(s.cache)
		s.cache = s.cache[:0]
		if s == keep {
			need += kept // nothing left to take over
		}
	}
	return used+need <= r.cells
}

func (r *Runner) hasFree() bool {
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
func (r *Runner) start(w *Work) {
	now := r.now()
	// At least the last prompt token is decoded: its logits start the
	// output. A scoring prefix needs no logits: it may come whole from the
	// cache, except on a recurrent state that rolls back, which the
	// branches are copied from: a sequence cut back (its drafts
	// rejected) holds its cut for its next decode alone, and is not
	// copied before it (backend.RollbackLimit).
	limit := len(w.Prompt) - 1
	if w.Score != nil && r.rollback == 0 {
		limit = len(w.Prompt)
	}
	// Log-probabilities are read from logits, whose last bits depend on
	// the shape of the batch the prompt was decoded in: a request that
	// asks for them decodes its whole prompt, so that the same request
	// gets the same values whatever the cache holds.
	cached := limit
	if w.Logprobs || w.PromptLP {
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
		n := Reusable(c.cache, w.Prompt, cached)
		if r.ckpt != nil && len(w.Images) == 0 {
			n = r.ckpt.reachable(c.seq, c.cache, n) // recurrent: what a checkpoint keeps
		}
		if s == nil || betterSlot(c, n, s, reuse, r.share) {
			s, reuse = c, n
		}
	}
	// Another sequence may hold more of the prompt already decoded (an
	// idle one passed over so as to keep its cache, or a busy one), or a
	// busy one be about to decode it.
	var src, leader *slot
	copied, shared := reuse, reuse
	for _, b := range r.slots {
		if b == s || !r.share {
			continue
		}
		if n := Reusable(b.cache, w.Prompt, cached); n > copied {
			src, copied = b, n
		}
		if b.w != nil && b.prefilled < len(b.w.Prompt) && b.leader == nil {
			if n := Reusable(b.w.Prompt, w.Prompt, limit); n > shared {
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
		if err := r.ctx.CopyTokens(src.seq, s.seq, 0, PosAt(w.Images, copied)); err != nil {
			r.log.Error("runner: sharing a prompt prefix", "err", err)
			copied = 0
		}
		cache = append(s.cache[:0], w.Prompt[:copied]...)
	} else if at := PosAt(w.Images, reuse); !r.ctx.RemoveTokens(s.seq, at, -1) || r.ctx.MaxPos(s.seq) != at-1 {
		// The memory could not keep exactly the prefix (a recurrent
		// state): back to a checkpoint there, or start afresh.
		if len(w.Images) > 0 || !r.ckpt.restore(s.seq, cache) {
			r.ctx.ClearSequence(s.seq)
			cache = cache[:0]
		}
	}
	r.admission++
	r.active.Add(1)
	*s = slot{
		seq: s.seq, seqs: s.seqs, w: w, cache: cache, used: now,
		idx: -1, order: r.admission, out: NewOutput(w.Family, w.Stops, w.Tools, w.Thinking), admitted: time.Now(),
		spec: s.spec,
	}
	s.spec.reset()
	s.prefilled, s.pos = len(cache), PosAt(w.Images, len(cache))
	s.think = r.ckpt.thinking(w)
	if w.PromptLP {
		s.promptLPs = make([]Logprob, 0, len(w.Prompt))
		s.promptLPs = append(s.promptLPs, Logprob{Token: int(w.Prompt[0]), Bytes: r.llm.Piece(w.Prompt[0], false)})
	}
	// Follow a leader that is still prefilling and is exactly where this
	// sequence now is: its next tokens are this prompt's next tokens.
	if leader != nil && shared > s.prefilled && leader.prefilled == s.prefilled && !w.PromptLP {
		s.leader, s.shared = leader, shared
	}
	r.snapshot(s) // a prefix reused, if it is long enough
}

// betterSlot reports whether idle slot c, which would reuse n tokens of
// a prompt, serves it better than slot s, which would reuse reuse. Where
// sequences share cells (share: a unified cache, whose partial copies
// cost nothing), a slot that keeps at least half of its cache (or has
// none) comes first: the prompt is copied from one that would throw most
// of its cache away (another conversation's, sharing only the chat
// template's first tokens), which so keeps it. Then the slot that reuses
// more; then the least recently used.
func betterSlot(c *slot, n int, s *slot, reuse int, share bool) bool {
	keeps := func(x *slot, n int) bool { return !share || 2*n >= len(x.cache) }
	switch kc, ks := keeps(c, n), keeps(s, reuse); {
	case kc != ks:
		return kc
	case n != reuse:
		return n > reuse
	}
	return c.used.Before(s.used)
}

// restoreGain is the fewest tokens a saved prefix must add to what memory
// gives for restoring it to be worth reading its file.
const restoreGain = 32

// restore puts into s's sequence the saved prefix that shares the most of
// w's prompt, up to limit tokens, when that is restoreGain more than have,
// what memory gives. It returns the tokens restored, which s.cache holds,
// or -1 when it left the slot as it was. A state that the backend
// refuses leaves the sequence empty: 0 (then w is prefilled cold).
func (r *Runner) restore(s *slot, w *Work, have, limit int) int {
	if r.disk == nil || len(w.Images) > 0 || limit < have+restoreGain {
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
	var e *StoredPrefix
	var n int
	tried := false // a refused state has emptied the sequence
	for {
		if e, n = r.disk.Longest(r.diskKey, w.Prompt, limit, r.perSeq, r.share); e == nil || n < have+restoreGain {
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
			r.log.Warn("runner: restoring a saved prompt prefix", "path", e.Path, "err", err)
			return 0
		}
		r.disk.Reject(e.Path, err)
	}
	if !r.ctx.RemoveTokens(s.seq, n, -1) || r.ctx.MaxPos(s.seq) != n-1 {
		r.ctx.ClearSequence(s.seq)
		return 0
	}
	s.cache = append(s.cache, e.Tokens[:n]...)
	r.log.Debug("runner: restored a saved prompt prefix", "tokens", n)
	return n
}

// snapshot saves the tokens in s's sequence to disk in the background,
// when there is a disk, they are at least saveMin, hold no image, and no
// entry holds them yet, and no other save is under way.
func (r *Runner) snapshot(s *slot) {
	if r.disk == nil || r.disk.Busy() || !r.worthSaving(s) {
		return
	}
	if state := r.state(s); state != nil {
		r.disk.SaveAsync(r.diskKey, slices.Clone(s.cache), state)
	}
}

// state is the state of s's sequence, or nil (logged) when llama.cpp
// cannot give it.
func (r *Runner) state(s *slot) []byte {
	state, err := r.ctx.SequenceState(s.seq)
	switch {
	case errors.Is(err, backend.ErrUnsupported):
		// The backend cannot save a sequence (Ollama's Go engine): the
		// model keeps its prompt cache in memory only.
		r.log.Info("runner: the prompt cache on disk is off for this model", "backend", r.llm.Backend(), "why", err)
		r.disk = nil
	case err != nil:
		r.log.Warn("runner: reading a prompt prefix to save", "err", err)
	}
	return state
}

func (r *Runner) worthSaving(s *slot) bool {
	return len(s.cache) >= r.saveMin && !slices.ContainsFunc(s.cache, func(t backend.Token) bool { return t < 0 }) &&
		!r.disk.Covered(r.diskKey, s.cache, r.share) && int64(r.ctx.SequenceStateSize(s.seq)) <= r.disk.Limit()
}

// persist saves the prefixes that the sequences hold, once the runner has
// stopped, and waits for the writes.
func (r *Runner) persist() {
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
func (r *Runner) reap() {
	for _, s := range r.slots {
		if s.w != nil && s.w.Job.abandoned() {
			r.release(s, nil, s.w.Job.cause())
		}
	}
}

// step decodes one batch: the pending token of every generating sequence
// first, then prompt chunks of prefilling ones in arrival order, as far as
// the batch holds. A chunk's tokens also carry the sequences that follow
// it.
func (r *Runner) step() error {
	if err := r.prefillImages(); err != nil {
		return err
	}
	b := r.batch
	b.Clear()
	room := r.draftRoom()
	for _, s := range r.slots {
		if s.w == nil || s.w.Score != nil || s.prefilled < len(s.w.Prompt) {
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
		drafts := room
		if len(s.forced) > 0 {
			drafts = 0
		}
		s.forced = nil
		if err := r.addDraft(b, s, drafts); err != nil {
			return err
		}
	}
	scored := 0 // prompt tokens of PromptLogprobs requests in the batch
	for s := r.nextPrefill(); s != nil && b.Len() < b.Cap(); s = r.nextPrefill() {
		// Text only: an image waits for the next step's prefillImages.
		n := min(b.Cap()-b.Len(), s.textUntil()-s.prefilled)
		// A recurrent model's prefill stops where a checkpoint is taken,
		// after this step's Decode (checkpoint.go).
		atMark := false
		if r.ckpt != nil && len(s.w.Images) == 0 {
			m := r.ckpt.nextMark(s.prefilled, len(s.w.Prompt), s.think) - s.prefilled
			n, atMark = min(n, m), n >= m
		}
		if s.w.PromptLP {
			// Each scored token's logits are an output row of the whole
			// vocabulary, which llama.cpp holds for the batch: bound them.
			if n = min(n, maxScoredPerStep-scored); n == 0 {
				break
			}
			scored += n
		}
		for k := range n {
			p := s.prefilled + k
			last := p == len(s.w.Prompt)-1 && s.w.Score == nil && !s.w.NoOutput
			predicts := s.w.PromptLP && p+1 < len(s.w.Prompt) // its logits score the next token
			idx, err := b.Add(s.w.Prompt[p], PosAt(s.w.Images, p), r.seqsAt(s, p), last || predicts)
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
		if atMark {
			break
		}
	}
	r.steps.Add(1)
	if err := r.ctx.Decode(b); err != nil {
		return err
	}
	for _, s := range r.slots {
		if s.w != nil && len(s.promptIdx) > 0 {
			r.promptLogprobs(s)
		}
		if s.w != nil && s.w.NoOutput && s.prefilled == len(s.w.Prompt) {
			r.finish(s, FinishLength, "")
			continue
		}
		if s.w != nil && r.ckpt != nil && s.generated == 0 && len(s.w.Images) == 0 && r.ckpt.mark(s.prefilled, len(s.w.Prompt), s.think) {
			r.ckpt.take(s.seq, s.cache) // a prompt's end, or every so many tokens
			if !s.w.Logprobs && !s.w.PromptLP {
				// The same prefix on disk, where a later prompt that
				// shares it finds it after a restart: a recurrent state
				// cannot be cut back to a shorter one.
				r.snapshot(s)
			}
		}
		if s.w != nil && s.idx >= 0 && s.generated == 0 && s.decoded >= r.saveLong && !s.w.Logprobs && !s.w.PromptLP {
			r.snapshot(s) // a long prompt, all in the KV cache now
		}
		// A work that ends on this step's samples hears of it only once
		// its rejected drafts have left the memory, so that a caller
		// who reads the sequence after the result finds what it holds.
		r.holding = true
		if s.w != nil && s.idx >= 0 {
			r.sample(s, s.idx)
		}
		r.verify(s) // drafted tokens, after the first sample
		r.holding = false
		for _, end := range r.ends {
			end()
		}
		clear(r.ends)
		r.ends = r.ends[:0]
	}
	return nil
}

// sample samples the slot's next token from the logits at batch index idx
// and emits it; the slot is released when none can be sampled.
func (r *Runner) sample(s *slot, idx int) {
	s.idx = idx
	g := s.w.Grammar
	if s.out.Thinking() {
		g = nil // the grammar constrains the answer only
	}
	tok := s.w.Sampler.Sample(r.ctx, s.idx, g)
	if tok < 0 {
		s.idx = -1
		err := ErrGrammar
		if g == nil {
			// Not the request's doing: the model's logits were
			// missing or none was a number.
			err = ErrNoToken
		}
		r.release(s, nil, err)
		return
	}
	// Thinking tokens keep no entry (push): none is computed.
	var lp *Logprob
	if !s.out.Thinking() {
		lp = r.logprob(s, tok)
	}
	s.idx = -1
	r.emit(s, tok, lp)
}

// maxScoredPerStep bounds the prompt tokens of a PromptLogprobs request
// decoded in one step, whose logits llama.cpp keeps for the batch: 64 rows
// of a 151,936-token vocabulary are 39 MB.
const maxScoredPerStep = 64

// nextPrefill is the earliest admitted slot whose prompt is not yet all in
// the KV cache, that follows no leader, and whose next prompt tokens are
// text.
func (r *Runner) nextPrefill() *slot {
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
	for _, sp := range s.w.Images {
		if sp.Start >= s.prefilled {
			return sp.Start
		}
	}
	return len(s.w.Prompt)
}

// seqsAt returns the sequences that take leader s's prompt token at p: its
// own and those of the slots that follow it there, which count the token as
// theirs.
func (r *Runner) seqsAt(s *slot, p int) []int {
	seqs := append(r.seqBuf[:0], s.seq)
	for _, f := range r.slots {
		if f.w != nil && f.leader == s && p == f.prefilled && p < f.shared {
			seqs = append(seqs, f.seq)
			f.cache = append(f.cache, s.w.Prompt[p])
			f.prefilled++
			f.pos = PosAt(f.w.Images, f.prefilled)
			if f.prefilled == f.shared {
				f.leader = nil
			}
		}
	}
	r.seqBuf = seqs
	return seqs
}

// prefilled records that the next n prompt tokens of s are in the batch.
func (r *Runner) prefilled(s *slot, n int) {
	s.cache = append(s.cache, s.w.Prompt[s.prefilled:s.prefilled+n]...)
	s.prefilled += n
	s.decoded += n
	s.pos = PosAt(s.w.Images, s.prefilled)
	r.decoded.Add(int64(n))
}

// prefillImages decodes, in admission order, the image of every slot whose
// prompt is in the KV cache up to an image: each in batches of its own,
// since a batch holds tokens or embeddings, not both. Attention is causal
// unless the projector wants an image read whole (the engine checked that
// it fits one batch).
func (r *Runner) prefillImages() error {
	for {
		var s *slot
		var sp ImageSpan
		for _, c := range r.slots {
			if c.w == nil || c.leader != nil || s != nil && c.order > s.order {
				continue
			}
			for _, img := range c.w.Images {
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
			return fmt.Errorf("runner: %w; they need llama.cpp", backend.Unsupported(r.llm.Backend(), "images"))
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
			at := PosAt(s.w.Images, sp.Start)
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
func (r *Runner) logprob(s *slot, tok backend.Token) *Logprob {
	if !s.w.Logprobs {
		return nil
	}
	lp := r.entry(s.idx, tok, s.w.Top)
	return &lp
}

// promptLogprobs records the entries of the prompt tokens that the logits
// of this step's prompt positions predict.
func (r *Runner) promptLogprobs(s *slot) {
	for _, idx := range s.promptIdx {
		tok := s.w.Prompt[len(s.promptLPs)]
		s.promptLPs = append(s.promptLPs, r.entry(idx, tok, s.w.Top))
	}
	s.promptIdx = s.promptIdx[:0]
}

// entry is the log-probability entry of tok under the logits at batch
// index idx, with the top most likely tokens.
func (r *Runner) entry(idx int, tok backend.Token, top int) Logprob {
	logits := r.ctx.Logits(idx)
	lse := backend.LogSumExp(r.ctx, logits)
	lp := Logprob{Token: int(tok), Bytes: r.llm.Piece(tok, false), Logprob: float64(logits[tok]) - lse}
	for _, id := range TopTokens(logits, top) {
		lp.Top = append(lp.Top, TopLogprob{Token: id, Bytes: r.llm.Piece(backend.Token(id), false), Logprob: float64(logits[id]) - lse})
	}
	return lp
}

// emit handles a sampled token and its log-probability entry (nil when
// not asked for): the end of the turn, reasoning and text through the
// output parser, the thinking budget, the token limit.
func (r *Runner) emit(s *slot, tok backend.Token, lp *Logprob) {
	if s.generated == 0 {
		s.first = time.Now()
	}
	s.generated++
	if r.llm.IsEOG(tok) {
		if s.w.Grammar != nil && s.out.Thinking() && len(s.w.ThinkClose) > 0 && s.generated-1+len(s.w.ThinkClose) < s.w.MaxTokens {
			// A constrained answer must follow: ending the turn while
			// thinking closes the thinking section instead.
			s.next, s.forced = s.w.ThinkClose[0], s.w.ThinkClose[1:]
			for _, t := range s.w.ThinkClose {
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
	case s.w.Single && len(s.calls) > 0:
		r.finish(s, FinishToolCalls, "") // one call, and the turn is over
	case s.generated >= s.w.MaxTokens:
		r.finish(s, FinishLength, "")
	case s.w.MaxCall > 0 && boundCall(s.w, s.out.Calling()):
		s.callCut = true
		r.finish(s, FinishLength, "")
	case s.out.Thinking() && s.w.Budget >= 0 && s.thought >= s.w.Budget && len(s.w.ThinkClose) > 0 &&
		s.generated+len(s.w.ThinkClose) >= s.w.MaxTokens:
		r.finish(s, FinishLength, "") // no room left to close the thinking and answer
	default:
		s.next = tok
		if s.out.Thinking() && s.w.Budget >= 0 && s.thought >= s.w.Budget && len(s.w.ThinkClose) > 0 {
			// The budget is spent: close the section, and the model
			// answers. The closing tokens count as output.
			s.forced = s.w.ThinkClose
			for _, t := range s.forced {
				s.generated++
				r.push(s, t, nil)
			}
		}
	}
}

// boundCall reports whether call, the text of the tool call w's output
// is inside, has run past w.MaxCall as a call of w.BoundCall: of the
// tools' names, BoundCall's is the first in it.
func boundCall(w *Work, call string) bool {
	if len(call) <= w.MaxCall {
		return false
	}
	first, name := len(call), ""
	for _, t := range w.Tools {
		if i := strings.Index(call, t.Name); i >= 0 && (i < first || i == first && len(t.Name) > len(name)) {
			first, name = i, t.Name
		}
	}
	return name == w.BoundCall
}

// push runs the bytes of one generated token through the slot's output and
// sends what it releases. The token's log-probability entry, if any, is
// kept when the token is part of the answer: neither thinking nor the
// markers that open and close it.
func (r *Runner) push(s *slot, tok backend.Token, lp *Logprob) Piece {
	was := s.out.Thinking()
	// A family's parser reads its markers (<tool_call>, <|channel|>),
	// which may be control tokens: their text is passed on. Plain text
	// shows none.
	p := s.out.Push(r.llm.Piece(tok, s.w.Family != nil))
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
func (r *Runner) send(s *slot, p Piece, last bool) {
	ev := Event{Text: p.Text, Reasoning: p.Reasoning, Calls: p.Calls}
	if s.w.Single && len(s.calls)+len(ev.Calls) > 1 {
		ev.Calls = ev.Calls[:max(0, 1-len(s.calls))] // one call at most
	}
	unsent := s.sentLP < len(s.logprobs) || s.promptLPs != nil && !s.sentPrompt
	if ev.Text == "" && ev.Reasoning == "" && len(ev.Calls) == 0 && !(last && unsent) {
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
	s.calls = append(s.calls, ev.Calls...)
	s.w.Job.send(ev)
}

func (r *Runner) finish(s *slot, reason Finish, stop string) {
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
		Finish:         reason,
		StopSequence:   stop,
		StopToken:      s.stopToken,
		Calls:          s.calls,
		CallCut:        s.callCut,
		Logprobs:       s.logprobs,
		PromptLogprobs: s.promptLPs,
		Usage: Usage{
			Prompt:     len(s.w.Prompt),
			Cached:     len(s.w.Prompt) - s.decoded,
			Completion: s.generated,
			Reasoning:  s.thought,
			Drafted:    s.spec.drafted,
			Accepted:   s.spec.accepted,
		},
		Timings: Timings{
			Queued:   s.admitted.Sub(s.w.Job.enqueued),
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
func (r *Runner) release(s *slot, res *Result, err error) {
	// The cache's age counts from before the caller hears of the end: a
	// caller that waits out the TTL and comes back finds it expired.
	s.used = r.now()
	turn := res != nil && s.w.Score == nil
	s.w.Close()
	// The count drops before the caller hears of the end, so that what a
	// caller reads of Stats after a response counts it no more.
	r.active.Add(-1)
	end := func(j *Job) {
		if turn {
			r.ckpt.take(s.seq, s.cache) // the end of a turn
		}
		j.finish(res, err)
	}
	if j := s.w.Job; r.holding {
		// After the step's rejected drafts leave the memory, so that
		// the checkpoint holds what the output does.
		r.ends = append(r.ends, func() { end(j) })
	} else {
		end(j)
	}
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
func (r *Runner) shutdown() {
	for _, s := range r.slots {
		if s.w != nil {
			r.release(s, nil, ErrClosed)
		}
	}
	if w := r.pending; w != nil {
		r.pending = nil
		r.held.Store(false)
		w.Close()
		w.Job.finish(nil, ErrClosed)
	}
	for {
		select {
		case w := <-r.queue:
			w.Close()
			w.Job.finish(nil, ErrClosed)
		default:
			return
		}
	}
}
