package cachetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/cache"
)

// unitSize is the Size of every record of unit.
const unitSize = 200

// unit returns a record of owner and id whose Size is unitSize, so that a
// bound of bytes counts records as a bound of entries does.
func unit(owner, id string) cache.Record {
	return sized(owner, id, unitSize)
}

// sized returns a record of owner and id whose Size is n.
func sized(owner, id string, n int64) cache.Record {
	r := record(owner, id)
	r.Response = append(r.Response, strings.Repeat(" ", int(n-r.Size()))...)
	return r
}

// dim is one kind of bound, entries or bytes.
type dim struct {
	name string
	cfg  Config
}

// dims returns the two kinds of bound, as the configs of a store where
// an owner may hold own records of unit and all owners together all of
// them.
func dims(own, all int) []dim {
	return []dim{
		{"Entries", Config{MaxEntries: all, MaxOwnerEntries: own}},
		{"Bytes", Config{MaxBytes: int64(all) * unitSize, MaxOwnerBytes: int64(own) * unitSize}},
	}
}

// id is the i-th id, all of one length.
func id(i int) string { return fmt.Sprintf("r%02d", i) }

// testOwnerBound checks the case: one owner writing on and on
// evicts its own records, never those of others, while the owners'
// bounds add up to the store's.
func testOwnerBound(t *testing.T, s *suite) {
	for _, d := range dims(3, 12) {
		t.Run(d.name, func(t *testing.T) {
			st := s.store(t, d.cfg)
			others := []string{"b", "c", "d"}
			for _, o := range others {
				for i := 1; i <= 3; i++ {
					put(t, st, unit(o, id(i)))
					s.clock.Advance(time.Second)
				}
			}
			for i := 1; i <= 30; i++ {
				put(t, st, unit("a", id(i)))
				s.clock.Advance(time.Second)
			}
			for _, o := range others {
				for i := 1; i <= 3; i++ {
					has(t, st, unit(o, id(i)))
				}
			}
			for i := 1; i <= 27; i++ {
				lacks(t, st, "a", id(i))
			}
			for i := 28; i <= 30; i++ {
				has(t, st, unit("a", id(i)))
			}
			// The others, too, are held to their bounds, by their own
			// records only.
			put(t, st, unit("b", id(4)))
			lacks(t, st, "b", id(1))
			for _, r := range []cache.Record{unit("b", id(2)), unit("b", id(4)), unit("a", id(28)), unit("c", id(1))} {
				has(t, st, r)
			}
		})
	}
}

// testOwnerCounts checks that replacing, deleting and expiring records
// give their room back to their owner.
func testOwnerCounts(t *testing.T, s *suite) {
	for _, d := range dims(3, 12) {
		t.Run(d.name, func(t *testing.T) {
			st := s.store(t, d.cfg)
			for i := 1; i <= 3; i++ {
				put(t, st, unit("a", id(i)))
				s.clock.Advance(time.Second)
			}
			// Replacing a record at the bound evicts nothing.
			put(t, st, unit("a", id(2)))
			s.clock.Advance(time.Second)
			for i := 1; i <= 3; i++ {
				has(t, st, unit("a", id(i)))
			}
			// Deleting one makes room for one.
			if err := st.Delete(ctx, "a", id(3)); err != nil {
				t.Fatal(err)
			}
			put(t, st, unit("a", id(4)))
			s.clock.Advance(time.Second)
			for _, i := range []int{1, 2, 4} {
				has(t, st, unit("a", id(i)))
			}
			// The next evicts the oldest put: r01, r02 having been
			// put again.
			put(t, st, unit("a", id(5)))
			lacks(t, st, "a", id(1))
			for _, i := range []int{2, 4, 5} {
				has(t, st, unit("a", id(i)))
			}
			// Expired records hold no room.
			s.clock.Advance(ttl)
			for i := 6; i <= 8; i++ {
				put(t, st, unit("a", id(i)))
			}
			for i := 6; i <= 8; i++ {
				has(t, st, unit("a", id(i)))
			}
		})
	}
}

// testOwnerBytes checks the byte bound of an owner with records of
// several sizes.
func testOwnerBytes(t *testing.T, s *suite) {
	own := int64(3*unitSize + unitSize/2)
	st := s.store(t, Config{MaxBytes: 4 * own, MaxOwnerBytes: own})
	for i := 1; i <= 3; i++ {
		put(t, st, unit("b", id(i)))
	}
	for i := 1; i <= 10; i++ {
		put(t, st, unit("a", id(i)))
		s.clock.Advance(time.Second)
	}
	lacks(t, st, "a", id(7))
	for i := 8; i <= 10; i++ {
		has(t, st, unit("a", id(i)))
	}
	// A record of three units leaves room for none of the older ones.
	wide := sized("a", "wide", 3*unitSize)
	put(t, st, wide)
	has(t, st, wide)
	for i := 8; i <= 10; i++ {
		lacks(t, st, "a", id(i))
	}
	// One over the owner's bound, although under the store's, is
	// refused and evicts nothing.
	if err := st.Put(ctx, sized("a", "over", own+1)); !errors.Is(err, cache.ErrTooLarge) {
		t.Errorf("Put of a record over MaxOwnerBytes: %v, want ErrTooLarge", err)
	}
	lacks(t, st, "a", "over")
	has(t, st, wide)
	// One of the owner's bound exactly fits, alone.
	full := sized("a", "full", own)
	put(t, st, full)
	has(t, st, full)
	lacks(t, st, "a", "wide")
	for i := 1; i <= 3; i++ {
		has(t, st, unit("b", id(i)))
	}
}

// testGlobalBound checks the store's bounds when the owners' add up to
// more: a Put evicts the oldest record of the owner holding the most, and
// its own owner's when it would hold as much, not the oldest record of
// all.
func testGlobalBound(t *testing.T, s *suite) {
	for _, d := range dims(4, 6) {
		t.Run(d.name, func(t *testing.T) {
			st := s.store(t, d.cfg)
			put(t, st, unit("b", id(1))) // the oldest of all
			s.clock.Advance(time.Second)
			for i := 1; i <= 4; i++ {
				put(t, st, unit("c", id(i)))
				s.clock.Advance(time.Second)
			}
			put(t, st, unit("a", id(1)))
			s.clock.Advance(time.Second)
			// Full: a would hold 2, c holds 4.
			put(t, st, unit("a", id(2)))
			s.clock.Advance(time.Second)
			lacks(t, st, "c", id(1))
			has(t, st, unit("b", id(1)))
			// a would hold 3, as c does: a's own oldest goes.
			put(t, st, unit("a", id(3)))
			s.clock.Advance(time.Second)
			lacks(t, st, "a", id(1))
			for _, r := range []cache.Record{unit("b", id(1)), unit("c", id(2)), unit("c", id(4)), unit("a", id(2)), unit("a", id(3))} {
				has(t, st, r)
			}
			// An owner with nothing takes from the one holding the most.
			put(t, st, unit("d", id(1)))
			s.clock.Advance(time.Second)
			lacks(t, st, "c", id(2))
			// However much a writes now, it takes its own room.
			for i := 4; i <= 20; i++ {
				put(t, st, unit("a", id(i)))
				s.clock.Advance(time.Second)
			}
			for _, r := range []cache.Record{unit("b", id(1)), unit("c", id(3)), unit("c", id(4)), unit("d", id(1)), unit("a", id(19)), unit("a", id(20))} {
				has(t, st, r)
			}
			lacks(t, st, "a", id(18))
		})
	}
}

// testModel runs random Puts, Deletes and clock steps of a few owners,
// one writing more than the others, against a model of the eviction
// rules, and compares every record after each step.
func testModel(t *testing.T, s *suite) {
	for _, regime := range []struct {
		name     string
		own, all int
	}{
		{"Fits", 3, 12},   // 4 owners of 3 records fit
		{"Crowded", 3, 7}, // they do not
	} {
		for _, d := range dims(regime.own, regime.all) {
			t.Run(regime.name+"/"+d.name, func(t *testing.T) {
				st := s.store(t, d.cfg)
				runModel(t, s, st, regime.own, regime.all)
			})
		}
	}
}

func runModel(t *testing.T, s *suite, st cache.Store, own, all int) {
	owners := []string{"a", "a", "b", "c", "d"} // a twice: it writes more
	m := &model{own: own, all: all, held: map[string][]modelRecord{}}
	rng := rand.New(rand.NewPCG(1, uint64(own*100+all)))
	var log []string
	for step := range 250 {
		owner, rid := owners[rng.IntN(len(owners))], id(rng.IntN(5))
		now := s.clock.Now()
		switch p := rng.IntN(20); {
		case p < 15:
			log = append(log, fmt.Sprintf("put %s/%s", owner, rid))
			put(t, st, unit(owner, rid))
			err := m.put(owner, rid, now, now.Add(ttl), func(candidates []string) (string, error) {
				var gone []string
				for _, c := range candidates {
					if _, err := st.Get(ctx, c, m.held[c][0].id); errors.Is(err, cache.ErrNotFound) {
						gone = append(gone, c)
					}
				}
				if len(gone) != 1 {
					return "", fmt.Errorf("evicted the oldest of %q, want that of one of %q", gone, candidates)
				}
				return gone[0], nil
			})
			if err != nil {
				t.Fatalf("step %d: %v; steps: %s", step, err, strings.Join(log, ", "))
			}
		case p < 18:
			log = append(log, fmt.Sprintf("delete %s/%s", owner, rid))
			err := st.Delete(ctx, owner, rid)
			if live := m.remove(owner, rid, now); live != (err == nil) || !live && !errors.Is(err, cache.ErrNotFound) {
				t.Fatalf("step %d: Delete(%q, %q): %v, want found %v; steps: %s", step, owner, rid, err, live, strings.Join(log, ", "))
			}
		default:
			d := time.Duration(rng.IntN(20)) * time.Minute
			log = append(log, fmt.Sprint("advance ", d))
			s.clock.Advance(d)
		}
		now = s.clock.Now()
		for _, o := range owners[1:] {
			for i := range 5 {
				_, err := st.Get(ctx, o, id(i))
				if want := m.live(o, id(i), now); want != (err == nil) || !want && !errors.Is(err, cache.ErrNotFound) {
					t.Fatalf("step %d: Get(%q, %q): %v, want found %v; model %v; steps: %s", step, o, id(i), err, want, m.held, strings.Join(log, ", "))
				}
			}
		}
	}
}

// model is what a store holds under the rules of cache.Store.Put, for
// records of one size: each owner's records, oldest first.
type model struct {
	own, all int
	held     map[string][]modelRecord
}

type modelRecord struct {
	id      string
	expires time.Time
}

// live reports whether owner's id is there at now.
func (m *model) live(owner, id string, now time.Time) bool {
	i := slices.IndexFunc(m.held[owner], func(r modelRecord) bool { return r.id == id })
	return i >= 0 && now.Before(m.held[owner][i].expires)
}

// remove removes owner's id, reporting whether it was live at now.
func (m *model) remove(owner, id string, now time.Time) bool {
	live := m.live(owner, id, now)
	m.held[owner] = slices.DeleteFunc(m.held[owner], func(r modelRecord) bool { return r.id == id })
	return live
}

// put puts owner's id at now. Where the rules leave the choice between
// owners that hold as much, victim says which of them the store chose.
func (m *model) put(owner, id string, now, expires time.Time, victim func(candidates []string) (string, error)) error {
	m.remove(owner, id, now)
	total := 0
	for o, rs := range m.held {
		m.held[o] = slices.DeleteFunc(rs, func(r modelRecord) bool { return !now.Before(r.expires) })
		total += len(m.held[o])
	}
	for len(m.held[owner]) > 0 && len(m.held[owner])+1 > m.own {
		m.held[owner] = m.held[owner][1:]
		total--
	}
	for total+1 > m.all {
		most := 0
		for _, rs := range m.held {
			most = max(most, len(rs))
		}
		from := owner
		if n := len(m.held[owner]); n == 0 || n+1 < most {
			var candidates []string
			for o, rs := range m.held {
				if len(rs) == most {
					candidates = append(candidates, o)
				}
			}
			slices.Sort(candidates)
			from = candidates[0]
			if len(candidates) > 1 {
				var err error
				if from, err = victim(candidates); err != nil {
					return err
				}
			}
		}
		m.held[from] = m.held[from][1:]
		total--
	}
	m.held[owner] = append(m.held[owner], modelRecord{id, expires})
	return nil
}

// testConcurrentOwners has owners write in parallel past their bounds,
// which add up to the store's: each must end with its own newest records.
// Run it with -race; for a store shared by replicas, it checks that
// evictions are atomic.
func testConcurrentOwners(t *testing.T, s *suite) {
	const owners, own, writes = 8, 5, 30
	for _, d := range dims(own, owners*own) {
		t.Run(d.name, func(t *testing.T) {
			st := s.store(t, d.cfg)
			var wg sync.WaitGroup
			for g := range owners {
				owner := fmt.Sprint("o", g)
				wg.Go(func() {
					for i := range writes {
						if err := st.Put(ctx, unit(owner, id(i))); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			for g := range owners {
				owner := fmt.Sprint("o", g)
				for i := range writes {
					if i < writes-own {
						lacks(t, st, owner, id(i))
					} else {
						has(t, st, unit(owner, id(i)))
					}
				}
			}
		})
	}
}
