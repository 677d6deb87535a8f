package account

import (
	"context"
	"sync"
	"time"
)

// maxClientWaiters is how many of one client's logins may wait for a
// password check at once; one more is ErrBusy at once, for that client
// alone.
const maxClientWaiters = 8

// checkQueue hands out the password checks that Login may run at once,
// fairly between clients: a client's logins wait in a queue of their
// own, and a check that ends goes to the next client in turn (round
// robin), so that a client that floods the form waits behind its own
// attempts, not behind others'. It is safe for concurrent use.
type checkQueue struct {
	mu   sync.Mutex
	free int // checks nobody holds; 0 while any login waits
	// waiting holds the queue of every client with a login waiting;
	// order lists the same queues, the next to be served first.
	waiting map[string]*clientQueue
	order   []*clientQueue
}

// clientQueue is one client's waiting logins, oldest first.
type clientQueue struct {
	client string
	turns  []*checkTurn
}

// checkTurn is one waiting login: ready is closed, and granted set
// under the queue's lock, when a check is handed to it.
type checkTurn struct {
	ready   chan struct{}
	granted bool
}

// newCheckQueue returns a queue of n checks.
func newCheckQueue(n int) *checkQueue {
	return &checkQueue{free: n, waiting: make(map[string]*clientQueue)}
}

// acquire takes a check for client, waiting up to wait for its turn:
// ErrBusy when the client already has maxClientWaiters logins waiting
// or its turn did not come in time, ctx's error when ctx ends first.
// The caller calls release once it has checked.
func (q *checkQueue) acquire(ctx context.Context, client string, wait time.Duration) error {
	q.mu.Lock()
	if q.free > 0 {
		q.free--
		q.mu.Unlock()
		return nil
	}
	cq := q.waiting[client]
	if cq != nil && len(cq.turns) >= maxClientWaiters {
		q.mu.Unlock()
		return ErrBusy
	}
	if cq == nil {
		cq = &clientQueue{client: client}
		q.waiting[client] = cq
		q.order = append(q.order, cq)
	}
	turn := &checkTurn{ready: make(chan struct{})}
	cq.turns = append(cq.turns, turn)
	q.mu.Unlock()

	t := time.NewTimer(wait)
	defer t.Stop()
	var err error
	select {
	case <-turn.ready:
		return nil
	case <-t.C:
		err = ErrBusy
	case <-ctx.Done():
		err = ctx.Err()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if turn.granted {
		// Handed over as the wait ended: hand it on.
		q.releaseLocked()
		return err
	}
	for i, x := range cq.turns {
		if x == turn {
			cq.turns = append(cq.turns[:i], cq.turns[i+1:]...)
			break
		}
	}
	if len(cq.turns) == 0 {
		delete(q.waiting, client)
		for i, x := range q.order {
			if x == cq {
				q.order = append(q.order[:i], q.order[i+1:]...)
				break
			}
		}
	}
	return err
}

// release ends a check that acquire gave: the next client in turn gets
// it, or it is free.
func (q *checkQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.releaseLocked()
}

// releaseLocked is release with q.mu held.
func (q *checkQueue) releaseLocked() {
	if len(q.order) == 0 {
		q.free++
		return
	}
	cq := q.order[0]
	q.order = q.order[1:]
	turn := cq.turns[0]
	cq.turns = cq.turns[1:]
	if len(cq.turns) > 0 {
		q.order = append(q.order, cq) // its next login waits for its next turn
	} else {
		delete(q.waiting, cq.client)
	}
	turn.granted = true
	close(turn.ready)
}

// waiters returns how many logins wait, for tests.
func (q *checkQueue) waiters() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, cq := range q.order {
		n += len(cq.turns)
	}
	return n
}
