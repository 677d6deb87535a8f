package inference

import (
	"context"
	"fmt"
	"time"
)

// A model is loaded while requests hold it, and for Config.KeepAlive
// after the last lets go; then the sweeper unloads it, and the next
// request that needs it loads it again. Loads and unloads run outside
// m.mu, with m.changing set: whoever needs the model meanwhile waits for
// them to end.

// hold keeps m loaded until release: it loads m first when it was
// unloaded, waiting for that (or for an unload under way) until ctx is
// done. The caller holds e.mu for reading, so that Close waits.
func (e *Engine) hold(ctx context.Context, m *model) error {
	for {
		m.mu.Lock()
		if m.loaded {
			m.users++
			m.mu.Unlock()
			return nil
		}
		if err := ctx.Err(); err != nil {
			m.mu.Unlock()
			return err // nobody waits: no load
		}
		ch := m.changing
		loading := ch == nil
		if loading {
			ch = make(chan struct{})
			m.changing, m.loadErr = ch, nil
			go e.reload(m, ch)
		}
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		m.mu.Lock()
		err := m.loadErr
		m.mu.Unlock()
		if err != nil && loading {
			return err
		}
	}
}

// keep holds the model named name loaded (see hold) until the caller
// calls release, without holding the engine open: Close frees the model
// meanwhile all the same, and what comes next fails with ErrClosed.
func (e *Engine) keep(ctx context.Context, name string) (release func(), err error) {
	m, done, err := e.acquire(ctx, name)
	if err != nil {
		return nil, err
	}
	m.holdAgain()
	done()
	return func() { m.release(e.cfg.Now()) }, nil
}

// holdAgain adds a hold on m, which the caller holds already.
func (m *model) holdAgain() {
	m.mu.Lock()
	m.users++
	m.mu.Unlock()
}

// release lets go of a hold.
func (m *model) release(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.users--; m.users == 0 {
		m.idle = now
		if m.released != nil {
			close(m.released)
			m.released = nil
		}
	}
}

// reload loads m again, reporting progress through Config.Progress, and
// closes ch when it is done.
func (e *Engine) reload(m *model, ch chan struct{}) {
	start := time.Now()
	_, _, err := e.open(m)
	m.mu.Lock()
	if err != nil {
		m.loadErr = fmt.Errorf("inference: loading %s again: %w", m.path, err)
	} else {
		m.loaded, m.idle = true, e.cfg.Now()
	}
	m.changing = nil
	m.mu.Unlock()
	close(ch)
	if err != nil {
		e.cfg.Logger.Error("inference: loading a model again", "path", m.path, "err", err)
		return
	}
	e.cfg.Logger.Info("inference: model loaded again", "path", m.path, "took", time.Since(start).Round(time.Millisecond))
}

// unload frees m, which is loaded and held by nobody; m.mu is held, and
// released while the model is freed.
func (e *Engine) unload(m *model, why string) {
	ch := make(chan struct{})
	m.changing, m.loaded = ch, false
	m.mu.Unlock()
	m.free()
	e.cfg.Logger.Info("inference: model unloaded", "path", m.path, "why", why)
	m.mu.Lock()
	m.changing = nil
	close(ch)
}

// close waits for a load or unload under way and frees m if it is loaded:
// Close's part, once no request can hold m any more.
func (m *model) close() {
	m.mu.Lock()
	for m.changing != nil {
		ch := m.changing
		m.mu.Unlock()
		<-ch
		m.mu.Lock()
	}
	loaded := m.loaded
	m.loaded = false
	m.mu.Unlock()
	if loaded {
		m.free()
	}
}

// sweep unloads the models idle for Config.KeepAlive or longer.
func (e *Engine) sweep() {
	now := e.cfg.Now()
	for _, m := range e.models {
		m.mu.Lock()
		if m.loaded && m.users == 0 && m.changing == nil && now.Sub(m.idle) >= e.cfg.KeepAlive {
			e.unload(m, fmt.Sprintf("idle for %v", e.cfg.KeepAlive))
		}
		m.mu.Unlock()
	}
}

// startSweeper runs sweep every second (or every KeepAlive, when that is
// shorter) until stopSweeper.
func (e *Engine) startSweeper() {
	if e.cfg.KeepAlive < 0 {
		return
	}
	e.sweepQuit, e.sweepDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(e.sweepDone)
		t := time.NewTicker(min(time.Second, e.cfg.KeepAlive))
		defer t.Stop()
		for {
			select {
			case <-t.C:
				e.sweep()
			case <-e.sweepQuit:
				return
			}
		}
	}()
}

func (e *Engine) stopSweeper() {
	if e.sweepQuit != nil {
		close(e.sweepQuit)
		<-e.sweepDone
	}
}

// Load loads the model named id when it is not loaded, waiting for it
// until ctx is done, and counts its idle time for Config.KeepAlive from
// now. Requests load a model themselves; Load lets an application do it
// ahead of them.
func (e *Engine) Load(ctx context.Context, id string) error {
	_, release, err := e.acquire(ctx, id)
	if err != nil {
		return err
	}
	release()
	return nil
}

// Unload frees the weights, KV cache and projector of the model named id,
// once the requests at work on it have ended (it waits for them until ctx
// is done), and saves its prompt prefixes first when Config.CacheDir is
// set. The next request for the model, or Load, loads it again. Entries
// that share the model's file share its unloading.
func (e *Engine) Unload(ctx context.Context, id string) error {
	// The engine's lock is not held while the requests end: Close may
	// come meanwhile, and frees the model itself.
	e.mu.RLock()
	m, closed := e.names[id], e.closed
	e.mu.RUnlock()
	switch {
	case closed:
		return ErrClosed
	case m == nil:
		return fmt.Errorf("%w: %q", ErrModelNotFound, id)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for {
		var ch chan struct{}
		switch {
		case m.changing != nil:
			ch = m.changing
		case !m.loaded:
			return nil
		case m.users > 0:
			if m.released == nil {
				m.released = make(chan struct{})
			}
			ch = m.released
		default:
			e.unload(m, "Engine.Unload")
			return nil
		}
		m.mu.Unlock()
		select {
		case <-ch:
			m.mu.Lock()
		case <-ctx.Done():
			m.mu.Lock()
			return ctx.Err()
		}
	}
}
