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
	// release, if set, runs once when the job finishes: it lets go of
	// the model the job kept loaded.
	release func()
}

func newJob(ctx context.Context) *job { return newJobs(ctx, 1)[0] }

// newJobs returns n jobs that share one wake channel, so that one reader
// waits for all of them.
func newJobs(ctx context.Context, n int) []*job {
	wake, now := make(chan struct{}, 1), time.Now()
	jobs := make([]*job, n)
	for i := range jobs {
		jobs[i] = &job{ctx: ctx, enqueued: now, wake: wake}
	}
	return jobs
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
	first := !j.finished
	if first {
		if final != nil {
			j.events = append(j.events, Event{Final: final})
		}
		j.err, j.finished = err, true
	}
	j.mu.Unlock()
	j.notify()
	if first && j.release != nil {
		j.release()
	}
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

// streamJobs yields the events of jobs, the choices of one request, until
// every one has finished, one fails, the reader breaks, or ctx is done;
// each event carries its job's index as Choice. The jobs share their wake
// channel (newJobs). Leaving, for any reason, marks every job cancelled,
// so that the runner frees their sequences at its next step.
func streamJobs(ctx context.Context, jobs []*job, yield func(Event, error) bool) {
	defer func() {
		for _, j := range jobs {
			j.cancelled.Store(true)
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
				ev.Choice = i
				if !yield(ev, nil) {
					return
				}
			}
			buf = evs
			if finished {
				if err != nil {
					yield(Event{Choice: i}, err)
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
			yield(Event{}, ctx.Err())
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
