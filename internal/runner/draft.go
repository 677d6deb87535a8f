package runner

import (
	"errors"
	"math"

	"github.com/inferkit/inferkit/internal/backend"
)

// Speculative decoding: a Drafter proposes the tokens that are likely to
// follow a generating sequence, the step decodes them in the same batch
// as the sequence's next token, with logits at each, and the sequence's
// sampler then samples at each drafted position in turn for as long as
// what it samples is what was drafted. The first token sampled that
// differs is the sequence's next token, as it is without drafting; the
// drafted tokens after it leave the KV cache (backend.Context's
// RemoveTokens).
//
// Every token the work emits is sampled by the work's own sampler, under
// its grammar, from the logits of exactly the tokens before it, and goes
// through the per-token path (emit) that it takes without drafting: a
// greedy work gives the same tokens, a drafted token that its grammar
// rejects is never sampled, and stop strings, log-probabilities, token
// limits and thinking budgets work unchanged. A sampled work keeps the
// target's distribution: sampling at a drafted position and keeping the
// drafted token d when the sample is d accepts d with probability p(d),
// and on a rejection the token sampled is distributed as p with d removed
// and renormalised — the rejection sampling of speculative decoding for
// a deterministic drafter, seeded by the work's sampler (and with one
// draw per emitted token, the same tokens as without drafting wherever
// the logits are the same).

// Drafter proposes tokens for a generating sequence, which the runner
// verifies on its model. Its methods are called from the runner's
// goroutine only, so it need not be safe for concurrent use; the runner
// that it is given to (Config.Drafter) calls Close when it stops.
type Drafter interface {
	// Draft appends to buf, and returns, up to k tokens proposed to
	// follow tokens: the prompt and output so far of sequence seq (one
	// of the runner's Config.Sequences). tokens is only valid during the
	// call. Proposing none is fine: the step goes on without drafting.
	Draft(seq int, tokens []backend.Token, k int, buf []backend.Token) []backend.Token
	// Close frees what the drafter holds.
	Close()
}

// The adaptive draft length: a sequence drafts the k-th token of a step
// while the chance that the k drafted tokens are all accepted, by its
// recent acceptance rate, is above draftCost, the cost of one more token
// in the batch relative to a step's; after its rate falls below it, it
// drafts one token every draftProbe steps to notice when drafts come
// right again.
const (
	draftCost  = 0.2
	draftProbe = 16
	draftDecay = 0.8  // weight of the past in the acceptance rate, per verification
	draftPrior = 0.75 // a new work's rate, as if from one verification
)

// errRollBack fails a work whose drafted tokens the memory could not
// remove.
var errRollBack = errors.New("runner: the memory could not remove rejected drafted tokens")

// DefaultMaxDraft is the most tokens drafted per step when Config.MaxDraft
// is 0.
const DefaultMaxDraft = 8

// speculation is a slot's drafting state for its work.
type speculation struct {
	draft []backend.Token // this step's drafted tokens, after next
	idx   []int           // their batch indices
	hits  float64         // accepted drafts, decayed
	tries float64         // compared drafts, decayed
	idle  int             // steps since a draft, while the rate is low
	// Drafted and Accepted count the work's drafted tokens and those
	// accepted.
	drafted, accepted int
}

func (sp *speculation) reset() {
	*sp = speculation{draft: sp.draft[:0], idx: sp.idx[:0], hits: draftPrior, tries: 1}
}

// length is the draft length the acceptance rate asks for, up to most,
// before the probe.
func (sp *speculation) length(most int) int {
	rate := sp.hits / sp.tries
	if rate <= draftCost {
		return 0
	}
	if rate >= 1 {
		return most
	}
	// rate^k > draftCost
	return min(most, int(math.Ceil(math.Log(draftCost)/math.Log(rate)))-1)
}

// draftRoom is how many tokens each generating sequence may draft this
// step: none without a drafter or while a prompt is being prefilled (its
// chunks fill the batch), and otherwise a share of a one-stream draft
// step's width (1+MaxDraft tokens), so that a batch of many sequences
// steps aside and concurrency never decodes more than it would.
func (r *Runner) draftRoom() int {
	if !r.Drafts() {
		return 0
	}
	n := 0
	for _, s := range r.slots {
		switch {
		case s.w == nil:
		case s.w.Score != nil || s.prefilled < len(s.w.Prompt):
			return 0
		default:
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return (1+r.maxDraft)/n - 1
}

// rollsBack reports whether the memory can remove the rejected drafts:
// a KV cache can; a recurrent state (SharesKV false) only where the
// backend keeps snapshots of the last tokens of each Decode
// (backend.RollbackLimit, which also bounds maxDraft then), and
// otherwise its model does not draft.
func (r *Runner) rollsBack() bool { return r.share || r.rollback > 0 }

// Drafts reports whether the runner drafts for work that asks
// (Work.Speculative): it has a Drafter, and its memory rolls back.
func (r *Runner) Drafts() bool { return r.drafter != nil && r.rollsBack() }

// addDraft drafts up to room tokens after s.next, which the batch holds
// at s.pos-1, and adds them to the batch with logits. The slot's cache
// and position take them, as they take s.next.
func (r *Runner) addDraft(b backend.Batch, s *slot, room int) error {
	sp := &s.spec
	sp.draft, sp.idx = sp.draft[:0], sp.idx[:0]
	w := s.w
	if room <= 0 || !w.Speculative {
		return nil
	}
	// Each accepted draft is an emitted token, and one more is sampled
	// after the last: the drafts stay within MaxTokens, and so within
	// the cells reserved for the work.
	k := min(room, w.MaxTokens-s.generated-1, b.Cap()-b.Len(), r.perSeq-s.pos)
	if n := sp.length(k); n > 0 {
		k = n
	} else if sp.idle++; sp.idle >= draftProbe {
		k = min(k, 1)
	} else {
		return nil
	}
	if k <= 0 {
		return nil
	}
	sp.draft = r.drafter.Draft(s.seq, s.cache, k, sp.draft)
	if len(sp.draft) > k {
		sp.draft = sp.draft[:k]
	}
	if len(sp.draft) > 0 {
		sp.idle = 0
	}
	vocab := backend.Token(r.llm.VocabSize())
	for i, t := range sp.draft {
		if t < 0 || t >= vocab {
			sp.draft = sp.draft[:i] // a drafter's mistake: not decodable
			break
		}
		idx, err := b.Add(t, s.pos, s.seqs, true)
		if err != nil {
			return err
		}
		sp.idx = append(sp.idx, idx)
		s.pos++
		s.cache = append(s.cache, t)
	}
	sp.draft = sp.draft[:len(sp.idx)]
	sp.drafted += len(sp.draft)
	return nil
}

// verify samples, after the step's first sample, at each drafted
// position whose drafted token is what was sampled before it, and removes
// from the sequence the drafted tokens after the first that was not. The
// slot's work may have ended on the way (a stop, the token limit, an
// error): the drafts after its last token go too, so that the cache
// holds what the KV cache does.
func (r *Runner) verify(s *slot) {
	sp := &s.spec
	if len(sp.draft) == 0 {
		return
	}
	kept := 0
	for kept < len(sp.draft) && s.w != nil && len(s.forced) == 0 {
		sp.tries++
		if s.next != sp.draft[kept] {
			break
		}
		sp.hits++
		sp.accepted++
		r.sample(s, sp.idx[kept])
		kept++
	}
	if rejected := len(sp.draft) - kept; rejected > 0 {
		from := s.pos - rejected
		if !r.ctx.RemoveTokens(s.seq, from, -1) || r.ctx.MaxPos(s.seq) != from-1 {
			// rollsBack promised otherwise: the memory holds tokens the
			// output does not. Forget the sequence.
			r.ctx.ClearSequence(s.seq)
			s.cache = s.cache[:0]
			if s.w != nil {
				r.release(s, nil, errRollBack)
			}
		} else {
			s.cache = s.cache[:len(s.cache)-rejected]
		}
		s.pos = from
	}
	r.drafted.Add(int64(len(sp.draft)))
	r.accepted.Add(int64(kept))
	sp.hits *= draftDecay
	sp.tries *= draftDecay
	sp.draft, sp.idx = sp.draft[:0], sp.idx[:0]
}
