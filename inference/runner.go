//go:build cgo

package inference

import (
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/inferkit/inferkit/internal/llamacpp"
)

// work is a queued request: its tokens, limits and sampler. The runner owns
// it from the moment it is dequeued and closes its sampler.
type work struct {
	job       *job
	prompt    []llamacpp.Token
	maxTokens int
	stops     []string
	sampler   *llamacpp.Sampler
}

// runner owns one llama.cpp context. Its goroutine admits queued work into
// free sequences and decodes, at each step, one batch that holds the next
// token of every generating sequence and prefill chunks of new prompts.
type runner struct {
	llm       *llamacpp.Model
	ctx       *llamacpp.Context
	batch     *llamacpp.Batch
	perSeq    int
	queue     chan *work
	quit      chan struct{}
	done      chan struct{}
	slots     []*slot
	admission int // counts admissions, to prefill in arrival order
	log       *slog.Logger

	// Read by tests from other goroutines.
	steps  atomic.Int64 // decode steps run
	active atomic.Int32 // slots serving a request
}

// slot is one sequence of the context and the request it serves.
type slot struct {
	seq  int
	seqs []int // {seq}, kept to add tokens without allocating
	w    *work

	order     int // admission number
	prefilled int // prompt tokens in the KV cache
	pos       int // next position
	next      llamacpp.Token
	idx       int // batch index of this step's logits, or -1
	generated int
	stopToken int

	out  *textOutput
	text strings.Builder

	admitted, first time.Time
}

func newRunner(llm *llamacpp.Model, ctx *llamacpp.Context, perSeq, queue int, log *slog.Logger) *runner {
	r := &runner{
		llm:    llm,
		ctx:    ctx,
		batch:  llamacpp.NewBatch(ctx, ctx.BatchSize()),
		perSeq: perSeq,
		queue:  make(chan *work, queue),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
		log:    log,
	}
	for i := range ctx.Size() / perSeq {
		r.slots = append(r.slots, &slot{seq: i, seqs: []int{i}, idx: -1})
	}
	return r
}

// enqueue offers w to the runner without waiting; false means the queue is
// full.
func (r *runner) enqueue(w *work) bool {
	select {
	case r.queue <- w:
		return true
	default:
		return false
	}
}

// stop ends the runner: running and queued requests fail with ErrClosed.
func (r *runner) stop() {
	close(r.quit)
	<-r.done
	r.batch.Close()
	r.ctx.Close()
}

func (r *runner) run() {
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
		if err := r.step(); err != nil {
			r.log.Error("inference: decode failed", "err", err)
			for _, s := range r.slots {
				if s.w != nil {
					r.release(s, nil, err)
				}
			}
		}
	}
}

func (r *runner) busy() bool {
	for _, s := range r.slots {
		if s.w != nil {
			return true
		}
	}
	return false
}

// admit moves queued work into free slots. With nothing running it waits
// for work; it returns false when the runner must stop.
func (r *runner) admit() bool {
	for {
		s := r.free()
		if s == nil {
			select {
			case <-r.quit:
				return false
			default:
				return true
			}
		}
		var w *work
		if r.busy() {
			select {
			case w = <-r.queue:
			case <-r.quit:
				return false
			default:
				return true
			}
		} else {
			select {
			case w = <-r.queue:
			case <-r.quit:
				return false
			}
		}
		if w.job.abandoned() {
			w.sampler.Close()
			w.job.finish(nil, w.job.cause())
			continue
		}
		r.start(s, w)
	}
}

func (r *runner) free() *slot {
	for _, s := range r.slots {
		if s.w == nil {
			return s
		}
	}
	return nil
}

func (r *runner) start(s *slot, w *work) {
	r.ctx.ClearSequence(s.seq)
	r.admission++
	r.active.Add(1)
	*s = slot{seq: s.seq, seqs: s.seqs, w: w, idx: -1, order: r.admission, out: newTextOutput(w.stops), admitted: time.Now()}
}

// reap frees the slots whose readers have gone.
func (r *runner) reap() {
	for _, s := range r.slots {
		if s.w != nil && s.w.job.abandoned() {
			r.release(s, nil, s.w.job.cause())
		}
	}
}

// step decodes one batch: the pending token of every generating sequence
// first, then prompt chunks of prefilling ones in arrival order, as far as
// the batch holds.
func (r *runner) step() error {
	b := r.batch
	b.Clear()
	for _, s := range r.slots {
		if s.w != nil && s.prefilled == len(s.w.prompt) {
			idx, err := b.Add(s.next, s.pos, s.seqs, true)
			if err != nil {
				return err
			}
			s.idx = idx
			s.pos++
		}
	}
	for s := r.nextPrefill(); s != nil && b.Len() < b.Cap(); s = r.nextPrefill() {
		n := min(b.Cap()-b.Len(), len(s.w.prompt)-s.prefilled)
		for k := range n {
			p := s.prefilled + k
			last := p == len(s.w.prompt)-1
			idx, err := b.Add(s.w.prompt[p], p, s.seqs, last)
			if err != nil {
				return err
			}
			if last {
				s.idx = idx
			}
		}
		s.prefilled += n
		s.pos += n
	}
	r.steps.Add(1)
	if err := r.ctx.Decode(b); err != nil {
		return err
	}
	for _, s := range r.slots {
		if s.w != nil && s.idx >= 0 {
			tok := s.w.sampler.Sample(r.ctx, s.idx)
			s.idx = -1
			r.emit(s, tok)
		}
	}
	return nil
}

// nextPrefill is the earliest admitted slot whose prompt is not yet all in
// the KV cache and that has no tokens in the batch being built.
func (r *runner) nextPrefill() *slot {
	var best *slot
	for _, s := range r.slots {
		if s.w != nil && s.prefilled < len(s.w.prompt) && (best == nil || s.order < best.order) {
			best = s
		}
	}
	return best
}

// emit handles a sampled token: the end of the turn, text through the stop
// matcher, the token limit.
func (r *runner) emit(s *slot, tok llamacpp.Token) {
	if s.generated == 0 {
		s.first = time.Now()
	}
	s.generated++
	if r.llm.IsEOG(tok) {
		s.stopToken = int(tok)
		r.finish(s, FinishStop, "")
		return
	}
	text, stop, stopped := s.out.push(r.llm.Piece(tok, false))
	r.send(s, text)
	switch {
	case stopped:
		r.finish(s, FinishStopSequence, stop)
	case s.generated >= s.w.maxTokens:
		r.finish(s, FinishLength, "")
	default:
		s.next = tok
	}
}

func (r *runner) send(s *slot, text string) {
	if text != "" {
		s.text.WriteString(text)
		s.w.job.send(Event{Text: text})
	}
}

func (r *runner) finish(s *slot, reason FinishReason, stop string) {
	if reason != FinishStopSequence {
		r.send(s, s.out.flush())
	}
	now := time.Now()
	res := &Result{
		Text:         s.text.String(),
		FinishReason: reason,
		StopSequence: stop,
		StopToken:    s.stopToken,
		Usage: Usage{
			PromptTokens:     len(s.w.prompt),
			CompletionTokens: s.generated,
		},
		Timings: Timings{
			Queued:  s.admitted.Sub(s.w.job.enqueued),
			Prefill: s.first.Sub(s.admitted),
			Decode:  now.Sub(s.first),
		},
	}
	r.release(s, res, nil)
}

// release ends the slot's request with res or err and frees the slot.
func (r *runner) release(s *slot, res *Result, err error) {
	s.w.sampler.Close()
	s.w.job.finish(res, err)
	s.w = nil
	s.text.Reset()
	r.active.Add(-1)
	r.ctx.ClearSequence(s.seq)
}

// shutdown fails every running and queued request with ErrClosed.
func (r *runner) shutdown() {
	for _, s := range r.slots {
		if s.w != nil {
			r.release(s, nil, ErrClosed)
		}
	}
	for {
		select {
		case w := <-r.queue:
			w.sampler.Close()
			w.job.finish(nil, ErrClosed)
		default:
			return
		}
	}
}
