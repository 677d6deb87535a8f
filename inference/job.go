package inference

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// job carries one request from the caller to a model's runner and its
// events back. The runner never blocks on a slow reader: events are queued
// under a mutex and the reader is woken through a one-slot channel.
type job struct {
	ctx      context.Context
	enqueued time.Time

	// cancelled is set when the reader stops (break, or ctx done).
	cancelled atomic.Bool

	mu       sync.Mutex
	events   []Event
	err      error
	finished bool
	wake     chan struct{}
}

func newJob(ctx context.Context) *job {
	return &job{ctx: ctx, enqueued: time.Now(), wake: make(chan struct{}, 1)}
}

// abandoned reports whether nobody waits for the job any more.
func (j *job) abandoned() bool { return j.cancelled.Load() || j.ctx.Err() != nil }

// cause is the error for an abandoned job.
func (j *job) cause() error {
	if err := j.ctx.Err(); err != nil {
		return err
	}
	return context.Canceled
}

func (j *job) send(ev Event) {
	j.mu.Lock()
	j.events = append(j.events, ev)
	j.mu.Unlock()
	j.notify()
}

// finish ends the job with its final result, or with err.
func (j *job) finish(final *Result, err error) {
	j.mu.Lock()
	if !j.finished {
		if final != nil {
			j.events = append(j.events, Event{Final: final})
		}
		j.err, j.finished = err, true
	}
	j.mu.Unlock()
	j.notify()
}

func (j *job) notify() {
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// take returns the events queued since the last call, and whether the job
// has finished (with err).
func (j *job) take(buf []Event) (evs []Event, finished bool, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	evs = append(buf[:0], j.events...)
	clear(j.events)
	j.events = j.events[:0]
	return evs, j.finished, j.err
}

// stream yields the job's events until it finishes, the reader breaks, or
// ctx is done. Leaving, for any reason, marks the job cancelled so that the
// runner frees its sequence at its next step.
func (j *job) stream(yield func(Event, error) bool) {
	defer j.cancelled.Store(true)
	var buf []Event
	for {
		evs, finished, err := j.take(buf)
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
		buf = evs
		if finished {
			if err != nil {
				yield(Event{}, err)
			}
			return
		}
		select {
		case <-j.wake:
		case <-j.ctx.Done():
			yield(Event{}, j.ctx.Err())
			return
		}
	}
}

// wait blocks until the job finishes, or ctx is done (which marks it
// cancelled, so that the runner drops it), and returns its error.
func (j *job) wait() error {
	defer j.cancelled.Store(true)
	for {
		j.mu.Lock()
		finished, err := j.finished, j.err
		j.mu.Unlock()
		if finished {
			return err
		}
		select {
		case <-j.wake:
		case <-j.ctx.Done():
			return j.ctx.Err()
		}
	}
}
