package inference

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// residency keeps the engine's models loaded while leases hold them, and
// for Config.KeepAlive after the last lets go; then its sweeper unloads a
// model, and the next acquire loads it again. It has one verb pair: a
// request takes a lease (Engine.acquire) and releases it once, when it
// is done with the model, its jobs in the runner included.
//
// Loads and unloads run outside a model's lock, with changing set:
// whoever needs the model meanwhile waits for them to end. Close stops
// each model's runner at once, which ends the requests at work, and
// frees the rest of the model once no lease holds it: at once, or at the
// last release, so that a request tokenizing or encoding an image when
// Close comes never sees its model's memory freed under it.
type residency struct {
	cfg Config
	// open loads a model's file again (Engine.open).
	open func(*model) error
	// of is the state of each model, and models the models in the order
	// New loaded them; both are made in New and not changed after.
	of     map[*model]*resident
	models []*model

	sweepQuit, sweepDone chan struct{}
}

// resident is the residency of one model, guarded by its mu.
type resident struct {
	mu       sync.Mutex
	loaded   bool
	closed   bool          // Close has stopped the model: no more loads
	orphan   bool          // Close left its freeing to the last release
	users    int           // leases held
	idle     time.Time     // when users last fell to 0
	changing chan struct{} // closed when a load or unload under way ends
	released chan struct{} // closed when users next falls to 0
	loadErr  error         // of the last load that failed
}

// lease holds a model loaded, and its memory valid, from acquire to
// release. Its zero value is not usable.
type lease struct {
	m    *model
	st   *resident
	res  *residency
	once sync.Once
}

func newResidency(cfg Config, open func(*model) error) *residency {
	return &residency{cfg: cfg, open: open, of: map[*model]*resident{}}
}

// add makes m, which New has just loaded, resident.
func (r *residency) add(m *model) {
	r.of[m] = &resident{loaded: true, idle: r.cfg.Now()}
	r.models = append(r.models, m)
}

// acquire returns a lease on the model named name, loaded: it loads the
// model first when it was unloaded, waiting for that (or for an unload
// under way) until ctx is done. The caller calls release once.
func (e *Engine) acquire(ctx context.Context, name string) (*lease, error) {
	e.mu.RLock()
	m, closed := e.names[name], e.closed
	e.mu.RUnlock()
	switch {
	case closed:
		return nil, ErrClosed
	case m == nil:
		return nil, fmt.Errorf("%w: %q", ErrModelNotFound, name)
	}
	r := e.res
	st := r.of[m]
	for {
		st.mu.Lock()
		switch {
		case st.closed:
			st.mu.Unlock()
			return nil, ErrClosed
		case st.loaded:
			st.users++
			st.mu.Unlock()
			return &lease{m: m, st: st, res: r}, nil
		}
		if err := ctx.Err(); err != nil {
			st.mu.Unlock()
			return nil, err // nobody waits: no load
		}
		ch := st.changing
		loading := ch == nil
		if loading {
			ch = make(chan struct{})
			st.changing, st.loadErr = ch, nil
			go r.reload(m, st, ch)
		}
		st.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		st.mu.Lock()
		err := st.loadErr
		st.mu.Unlock()
		if err != nil && loading {
			return nil, err
		}
	}
}

// release lets go of the lease; only its first call counts. The last
// release of a model that Close stopped frees it.
func (l *lease) release() {
	l.once.Do(func() {
		st := l.st
		st.mu.Lock()
		free := false
		if st.users--; st.users == 0 {
			st.idle = l.res.cfg.Now()
			if st.released != nil {
				close(st.released)
				st.released = nil
			}
			free, st.orphan = st.orphan, false
		}
		st.mu.Unlock()
		if free {
			l.m.free()
		}
	})
}

// reload loads m again, reporting progress through Config.Progress, and
// closes ch when it is done.
func (r *residency) reload(m *model, st *resident, ch chan struct{}) {
	start := time.Now()
	err := r.open(m)
	st.mu.Lock()
	if err != nil {
		st.loadErr = fmt.Errorf("inference: loading %s again: %w", m.path, err)
	} else {
		st.loaded, st.idle = true, r.cfg.Now()
	}
	st.changing = nil
	st.mu.Unlock()
	close(ch)
	if err != nil {
		r.cfg.Logger.Error("inference: loading a model again", "path", m.path, "err", err)
		return
	}
	r.cfg.Logger.Info("inference: model loaded again", "path", m.path, "took", time.Since(start).Round(time.Millisecond))
}

// unload frees m, which is loaded and held by nobody; st.mu is held, and
// released while the model is freed.
func (r *residency) unload(m *model, st *resident, why string) {
	ch := make(chan struct{})
	st.changing, st.loaded = ch, false
	st.mu.Unlock()
	m.free()
	r.cfg.Logger.Info("inference: model unloaded", "path", m.path, "why", why)
	st.mu.Lock()
	st.changing = nil
	close(ch)
}

// close is Close's part for every model: it waits for a load or unload
// under way, stops each loaded model's runner, which ends the requests
// at work, and frees the model, or leaves that to its last release.
func (r *residency) close() {
	for _, m := range r.models {
		st := r.of[m]
		st.mu.Lock()
		for st.changing != nil {
			ch := st.changing
			st.mu.Unlock()
			<-ch
			st.mu.Lock()
		}
		st.closed = true
		if !st.loaded {
			st.mu.Unlock()
			continue
		}
		st.loaded = false
		ch := make(chan struct{})
		st.changing = ch
		st.mu.Unlock()
		if m.runner != nil {
			m.runner.Stop() // its jobs end, and release their leases
		}
		st.mu.Lock()
		st.changing = nil
		close(ch)
		free := st.users == 0
		st.orphan = !free
		st.mu.Unlock()
		if free {
			m.free()
		}
	}
}

// sweep unloads the models idle for Config.KeepAlive or longer.
func (r *residency) sweep() {
	now := r.cfg.Now()
	for _, m := range r.models {
		st := r.of[m]
		st.mu.Lock()
		if m.remote == nil && st.loaded && st.users == 0 && st.changing == nil && now.Sub(st.idle) >= r.cfg.KeepAlive {
			r.unload(m, st, fmt.Sprintf("idle for %v", r.cfg.KeepAlive))
		}
		st.mu.Unlock()
	}
}

// startSweeper runs sweep every second (or every KeepAlive, when that is
// shorter) until stopSweeper.
func (r *residency) startSweeper() {
	if r.cfg.KeepAlive < 0 {
		return
	}
	r.sweepQuit, r.sweepDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.sweepDone)
		t := time.NewTicker(min(time.Second, r.cfg.KeepAlive))
		defer t.Stop()
		for {
			select {
			case <-t.C:
				r.sweep()
			case <-r.sweepQuit:
				return
			}
		}
	}()
}

func (r *residency) stopSweeper() {
	if r.sweepQuit != nil {
		close(r.sweepQuit)
		<-r.sweepDone
	}
}

// loaded reports whether m is loaded now.
func (r *residency) loaded(m *model) bool {
	st := r.of[m]
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.loaded
}

// Load loads the model named id when it is not loaded, waiting for it
// until ctx is done, and counts its idle time for Config.KeepAlive from
// now. Requests load a model themselves; Load lets an application do it
// ahead of them.
func (e *Engine) Load(ctx context.Context, id string) error {
	l, err := e.acquire(ctx, id)
	if err != nil {
		return err
	}
	l.release()
	return nil
}

// Unload frees the weights, KV cache and projector of the model named id,
// once the requests at work on it have ended (it waits for them until ctx
// is done), and saves its prompt prefixes first when Config.CacheDir is
// set. The next request for the model, or Load, loads it again. Entries
// that share the model's file share its unloading.
func (e *Engine) Unload(ctx context.Context, id string) error {
	e.mu.RLock()
	m, closed := e.names[id], e.closed
	e.mu.RUnlock()
	switch {
	case closed:
		return ErrClosed
	case m == nil:
		return fmt.Errorf("%w: %q", ErrModelNotFound, id)
	}
	if m.remote != nil {
		return nil // an upstream's model: nothing here to free
	}
	st := e.res.of[m]
	st.mu.Lock()
	defer st.mu.Unlock()
	for {
		var ch chan struct{}
		switch {
		case st.changing != nil:
			ch = st.changing
		case !st.loaded:
			return nil
		case st.users > 0:
			if st.released == nil {
				st.released = make(chan struct{})
			}
			ch = st.released
		default:
			e.res.unload(m, st, "Engine.Unload")
			return nil
		}
		st.mu.Unlock()
		select {
		case <-ch:
			st.mu.Lock()
		case <-ctx.Done():
			st.mu.Lock()
			return ctx.Err()
		}
	}
}
