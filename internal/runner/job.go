package runner

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Job carries one piece of work from its caller to the runner and its
// events back. The runner never blocks on a slow reader: events are
// queued under a mutex and the reader is woken through a one-slot
// channel, which the jobs of one request share (NewJobs). A Job is safe
// for concurrent use by its reader and the runner; it is made by NewJobs
// and needs no Close.
type Job struct {
	ctx      context.Context
	enqueued time.Time

	// cancelled is set when the reader stops (break, or ctx done).
	cancelled atomic.Bool

	mu       sync.Mutex
	events   []Event
	err      error
	finished bool
	wake     chan struct{}
	// done, if set, runs once when the job finishes.
	done func()
}

// NewJobs returns n jobs of one request, which share one wake channel,
// so that one reader (Stream) waits for all of them. done, if not nil,
// runs once, when the last of them finishes.
func NewJobs(ctx context.Context, n int, done func()) []*Job {
	wake, now := make(chan struct{}, 1), time.Now()
	var left atomic.Int32
	left.Store(int32(n))
	var last func()
	if done != nil {
		last = func() {
			if left.Add(-1) == 0 {
				done()
			}
		}
	}
	jobs := make([]*Job, n)
	for i := range jobs {
		jobs[i] = &Job{ctx: ctx, enqueued: now, wake: wake, done: last}
	}
	return jobs
}

// Cancel tells the runner that nobody waits for the job any more: it
// frees the job's sequence at its next step, or drops the job unstarted.
func (j *Job) Cancel() { j.cancelled.Store(true) }

// abandoned reports whether nobody waits for the job any more.
func (j *Job) abandoned() bool { return j.cancelled.Load() || j.ctx.Err() != nil }

// cause is the error for an abandoned job.
func (j *Job) cause() error {
	if err := j.ctx.Err(); err != nil {
		return err
	}
	return context.Canceled
}

func (j *Job) send(ev Event) {
	j.mu.Lock()
	j.events = append(j.events, ev)
	j.mu.Unlock()
	j.notify()
}

// Fail ends a job that never reached the runner with err, as the runner
// ends one: its reader sees err, and its done runs.
func (j *Job) Fail(err error) { j.finish(nil, err) }

// finish ends the job with its final result, or with err.
func (j *Job) finish(final *Result, err error) {
	j.mu.Lock()
	first := !j.finished
	if first {
		if final != nil {
			j.events = append(j.events, Event{Final: final})
		}
		j.err, j.finished = err, true
	}
	j.mu.Unlock()
	j.notify()
	if first && j.done != nil {
		j.done()
	}
}

func (j *Job) notify() {
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// take returns the events queued since the last call, and whether the job
// has finished (with err).
func (j *Job) take(buf []Event) (evs []Event, finished bool, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	evs = append(buf[:0], j.events...)
	clear(j.events)
	j.events = j.events[:0]
	return evs, j.finished, j.err
}

// Stream yields the events of jobs, the choices of one request, with the
// index of each event's job, until every one has finished, one fails (its
// error is the last pair), the reader breaks, or ctx is done (ctx's
// error). The jobs share their wake channel (NewJobs). Leaving, for any
// reason, cancels every job, so that the runner frees their sequences at
// its next step.
func Stream(ctx context.Context, jobs []*Job, yield func(int, Event, error) bool) {
	defer func() {
		for _, j := range jobs {
			j.Cancel()
		}
	}()
	done := make([]bool, len(jobs))
	left := len(jobs)
	var buf []Event
	for {
		for i, j := range jobs {
			if done[i] {
				continue
			}
			evs, finished, err := j.take(buf)
			for _, ev := range evs {
				if !yield(i, ev, nil) {
					return
				}
			}
			buf = evs
			if finished {
				if err != nil {
					yield(i, Event{}, err)
					return
				}
				done[i] = true
				left--
			}
		}
		if left == 0 {
			return
		}
		select {
		case <-jobs[0].wake:
		case <-ctx.Done():
			yield(0, Event{}, ctx.Err())
			return
		}
	}
}

// Wait blocks until the job finishes, or its context is done (which
// cancels it, so that the runner drops it), and returns its error.
func (j *Job) Wait() error {
	defer j.Cancel()
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
