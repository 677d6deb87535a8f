package runner

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/inferkit/inferkit/internal/backend"
)

// checkpoints keeps the recurrent state of the slots' sequences at chosen
// positions, for a model whose memory cannot be cut back (a recurrent or
// hybrid one, whose context is a backend.Checkpointer): the end of each
// prompt and the token before it (which a repeated prompt decodes again),
// the start of the thinking section that a prompt opens (the next turn's
// template renders this turn without it), every few tokens of a long
// prompt, and the end of each turn. A later
// prompt that shares part of what a sequence holds takes the sequence
// back to the checkpoint at or below the shared prefix, and decodes the
// rest, where without one it would decode all.
//
// A checkpoint belongs to one sequence and to the tokens the sequence held
// when it was taken, which it keeps: it is used only while the sequence
// holds them still, so that clearing a sequence or giving it other tokens
// needs no bookkeeping here. What all checkpoints take, their states and
// tokens, stays within a budget: the least recently used go first.
//
// The runner's goroutine alone uses it. A nil *checkpoints keeps none.
type checkpoints struct {
	cp     backend.Checkpointer
	budget int64 // bytes all checkpoints take at most
	every  int   // a checkpoint every this many prompt tokens; 0: none
	used   int64
	tick   int64 // counts takes and restores, for recency
	list   []*checkpoint
	log    *slog.Logger
	llm    backend.Model
	opens  map[string][]backend.Token // tokens of a thinking marker
}

// checkpoint is the recurrent state of sequence seq after tokens.
type checkpoint struct {
	seq    int
	tokens []backend.Token
	state  []byte
	used   int64 // tick of its last take or restore
}

func (c *checkpoint) size() int64 { return int64(len(c.state)) + 4*int64(len(c.tokens)) }

// newCheckpoints returns the checkpoints of ctx's sequences within budget
// bytes, with one every `every` prompt tokens (0: none but the ends of
// prompts and turns); nil when ctx cannot take them or budget is not
// positive.
func newCheckpoints(llm backend.Model, ctx backend.Context, budget int64, every int, log *slog.Logger) *checkpoints {
	cp := backend.FindCheckpointer(ctx)
	if cp == nil || budget <= 0 {
		return nil
	}
	return &checkpoints{cp: cp, budget: budget, every: max(every, 0), log: log, llm: llm, opens: map[string][]backend.Token{}}
}

// thinking is where the thinking section that w's prompt opens at its end
// starts, or 0: the family's opening marker among the prompt's last
// tokens.
func (k *checkpoints) thinking(w *Work) int {
	if k == nil || !w.Thinking || w.Family == nil || w.Family.Thinking == nil || w.Family.Thinking.Open == "" {
		return 0
	}
	open := w.Family.Thinking.Open
	toks, ok := k.opens[open]
	if !ok {
		toks, _ = k.llm.Tokenize(open, true)
		k.opens[open] = toks
	}
	const tail = 16 // the generation prompt's newlines and the like after it
	for i := len(w.Prompt) - len(toks); i > 0 && i >= len(w.Prompt)-len(toks)-tail; i-- {
		if len(toks) > 0 && slices.Equal(w.Prompt[i:i+len(toks)], toks) {
			return i
		}
	}
	return 0
}

// mark reports whether a prompt of n tokens whose thinking starts at
// think (0: none), prefilled up to p, is where a checkpoint is taken.
func (k *checkpoints) mark(p, n, think int) bool {
	return p > 0 && (p == n-1 || p == n || p == think || k.every > 0 && p%k.every == 0)
}

// nextMark is the next position after p at which such a prompt is
// checkpointed: a prefill chunk from p stops there.
func (k *checkpoints) nextMark(p, n, think int) int {
	for _, m := range []int{think, n - 1, n} {
		if m > p {
			if k.every > 0 {
				return min(m, (p/k.every+1)*k.every)
			}
			return m
		}
	}
	return n
}

// reachable is how many of the n tokens of cache that a prompt shares can
// stay in its sequence: all n when the sequence holds just those, else the
// longest checkpoint within them; 0 when none is.
func (k *checkpoints) reachable(seq int, cache []backend.Token, n int) int {
	if n == len(cache) {
		return n
	}
	if c := k.best(seq, cache[:n]); c != nil {
		return len(c.tokens)
	}
	return 0
}

// best is the longest checkpoint of seq whose tokens are a prefix of
// toks, or nil.
func (k *checkpoints) best(seq int, toks []backend.Token) *checkpoint {
	var best *checkpoint
	for _, c := range k.list {
		if c.seq == seq && len(c.tokens) <= len(toks) && (best == nil || len(c.tokens) > len(best.tokens)) &&
			slices.Equal(c.tokens, toks[:len(c.tokens)]) {
			best = c
		}
	}
	return best
}

// take keeps the state of seq, which holds the tokens cache, as a
// checkpoint, unless one holds it already or cache has an image. It drops
// seq's checkpoints that cache has left behind, and then the least
// recently used ones until the budget holds the new one.
func (k *checkpoints) take(seq int, cache []backend.Token) {
	if k == nil || len(cache) == 0 || slices.ContainsFunc(cache, func(t backend.Token) bool { return t < 0 }) {
		return
	}
	k.tick++
	k.drop(func(c *checkpoint) bool {
		return c.seq == seq && (len(c.tokens) > len(cache) || !slices.Equal(c.tokens, cache[:len(c.tokens)]))
	})
	if c := k.best(seq, cache); c != nil && len(c.tokens) == len(cache) {
		c.used = k.tick
		return
	}
	state, err := k.cp.Checkpoint(seq)
	if errors.Is(err, backend.ErrUnsupported) {
		// Not now (a state cut back since its last decode, whose
		// checkpoint the backend cannot write): an earlier checkpoint
		// serves.
		k.log.Debug("runner: no checkpoint of a recurrent state", "err", err)
		return
	}
	if err != nil {
		k.log.Warn("runner: taking a checkpoint of a recurrent state", "err", err)
		return
	}
	c := &checkpoint{seq: seq, tokens: slices.Clone(cache), state: state, used: k.tick}
	if c.size() > k.budget {
		return
	}
	slices.SortFunc(k.list, func(a, b *checkpoint) int { return int(a.used - b.used) })
	for k.used+c.size() > k.budget {
		k.used -= k.list[0].size()
		k.list = k.list[1:]
	}
	k.list = append(k.list, c)
	k.used += c.size()
}

// drop removes the checkpoints that gone reports.
func (k *checkpoints) drop(gone func(*checkpoint) bool) {
	k.list = slices.DeleteFunc(k.list, func(c *checkpoint) bool {
		if gone(c) {
			k.used -= c.size()
			return true
		}
		return false
	})
}

// restore takes seq, which holds at least the tokens of cache, back to its
// checkpoint after exactly cache. False means there is none or the backend
// refused it (then it is dropped): seq is to be cleared.
func (k *checkpoints) restore(seq int, cache []backend.Token) bool {
	if k == nil || len(cache) == 0 {
		return false
	}
	c := k.best(seq, cache)
	if c == nil || len(c.tokens) != len(cache) {
		return false
	}
	k.tick++
	c.used = k.tick
	if err := k.cp.RestoreCheckpoint(seq, len(cache), c.state); err != nil {
		level := slog.LevelWarn
		if errors.Is(err, backend.ErrBadState) {
			level = slog.LevelError // the runner's bookkeeping is wrong
		}
		k.log.Log(context.Background(), level, "runner: restoring a checkpoint of a recurrent state", "tokens", len(cache), "err", err)
		k.drop(func(x *checkpoint) bool { return x == c })
		return false
	}
	return true
}

// bytes is what the checkpoints take.
func (k *checkpoints) bytes() int64 {
	if k == nil {
		return 0
	}
	return k.used
}
