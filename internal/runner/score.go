package runner

import (
	"errors"
	"fmt"

	"github.com/inferkit/inferkit/internal/backend"
)

// scoreReady decodes the branches of every scoring slot whose prefix is
// all in the KV cache, and frees the slot.
func (r *Runner) scoreReady() {
	for _, s := range r.slots {
		if s.w != nil && s.w.Score != nil && s.leader == nil && s.prefilled == len(s.w.Prompt) {
			r.branch(s)
		}
	}
}

// BranchRoom is the number of KV cells that the branches of a prefix of
// n tokens may take at once: those kept for branches, and those that the
// prefix leaves of its sequence's context. While a slot's branches
// decode, no other sequence grows.
func (r *Runner) BranchRoom(n int) int { return r.branchCells + r.perSeq - n }

// BranchSequences is the number of sequences that branches decode on
// (Config.Branches): none means the runner cannot score.
func (r *Runner) BranchSequences() int { return len(r.branchSeqs) }

// FitError says how a branch does not fit after its prefix (Fits).
type FitError struct {
	// Candidates: the candidate tree branches more ways than there are
	// branch sequences; otherwise the branch and its candidates are too
	// long or too many.
	Candidates bool
	Reason     string
}

// Error is the reason, named as the runner's.
func (e *FitError) Error() string { return "runner: " + e.Reason }

// Fits checks that a branch and its candidate tree fit after a prefix of
// n tokens: in the context, in the branch room, and in the branch
// sequences. It fails with a *FitError.
func (r *Runner) Fits(n int, branch []backend.Token, t *CandidateTree) error {
	switch cells, room := len(branch)+t.Cells(), r.BranchRoom(n); {
	case n+len(branch)+t.Depth() > r.perSeq:
		return &FitError{Reason: fmt.Sprintf("%d prefix tokens, %d branch tokens and candidates %d tokens deep; the context holds %d", n, len(branch), t.Depth(), r.perSeq)}
	case cells > room:
		return &FitError{Reason: fmt.Sprintf("the branch and its candidates take %d KV cells; %d are left for branches", cells, room)}
	case 1+len(t.Paths) > len(r.branchSeqs):
		return &FitError{Candidates: true,
			Reason: fmt.Sprintf("the candidates branch %d ways after their first token and decode on %d sequences; Config.Branches is %d", len(t.Paths), 1+len(t.Paths), len(r.branchSeqs))}
	}
	return nil
}

// branch decodes the branches of slot s in groups that fit the branch
// sequences and the KV room (each group in as few batches as the batch
// size allows), reads the candidates' probabilities and ends the
// request. The branch sequences are empty again afterwards; the prefix
// stays in the slot's cache.
func (r *Runner) branch(s *slot) {
	sw := s.w.Score
	res := &sw.Result
	res.Branches = make([]BranchScore, len(sw.Branches))
	room := r.BranchRoom(len(s.w.Prompt))
	for i := 0; i < len(sw.Branches); {
		if s.w.Job.abandoned() {
			r.release(s, nil, s.w.Job.cause())
			return
		}
		j, seqs, cells := i, 0, 0
		for j < len(sw.Branches) {
			t := sw.Trees[j]
			n, c := 1+len(t.Paths), len(sw.Branches[j])+t.Cells()
			if seqs+n > len(r.branchSeqs) || cells+c > room {
				break
			}
			seqs, cells = seqs+n, cells+c
			j++
		}
		err := errors.New("runner: a score branch does not fit the branch sequences and KV room")
		if j > i {
			err = r.branchGroup(s, i, j)
		}
		for _, seq := range r.branchSeqs[:max(seqs, 1)] {
			r.ctx.ClearSequence(seq)
		}
		if err != nil {
			r.log.Error("runner: decoding score branches failed", "err", err)
			r.release(s, nil, err)
			return
		}
		i = j
	}
	prompt := len(s.w.Prompt)
	for _, b := range sw.Branches {
		prompt += len(b)
	}
	res.Usage = Usage{Prompt: prompt, Cached: len(s.w.Prompt) - s.decoded}
	r.release(s, nil, nil)
}

// branchGroup decodes branches [i, j) of slot s: each on a branch
// sequence that first shares the prefix's cells, then the paths of its
// candidate tree, each on a sequence that shares the branch's cells.
func (r *Runner) branchGroup(s *slot, i, j int) error {
	sw := s.w.Score
	type read struct{ branch, node, idx int }
	var reads []read
	edges := make([][]float64, j-i)
	b := r.batch
	b.Clear()
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		r.steps.Add(1)
		if err := r.ctx.Decode(b); err != nil {
			return err
		}
		for _, o := range reads {
			logits := r.ctx.Logits(o.idx)
			sw.Trees[o.branch].Read(o.node, logits, backend.LogSumExp(r.ctx, logits), edges[o.branch-i])
		}
		reads = reads[:0]
		b.Clear()
		return nil
	}
	add := func(t backend.Token, pos, seq, branch, node int) error {
		if b.Len() == b.Cap() {
			if err := flush(); err != nil {
				return err
			}
		}
		r.seqBuf = append(r.seqBuf[:0], seq)
		idx, err := b.Add(t, pos, r.seqBuf, node >= 0)
		if err == nil && node >= 0 {
			reads = append(reads, read{branch, node, idx})
		}
		return err
	}
	base := PosAt(s.w.Images, len(s.w.Prompt))
	// Branch k takes the branch sequence first[k-i], and its paths those
	// after it.
	first := make([]int, j-i)
	next := 0
	for k := i; k < j; k++ {
		first[k-i] = next
		next += 1 + len(sw.Trees[k].Paths)
		edges[k-i] = make([]float64, sw.Trees[k].Nodes())
		seq := r.branchSeqs[first[k-i]]
		r.ctx.ClearSequence(seq)
		if err := r.ctx.CopyTokens(s.seq, seq, 0, -1); err != nil {
			return err
		}
		toks := sw.Branches[k]
		for p, t := range toks {
			node := -1
			if p == len(toks)-1 {
				node = 0
			}
			if err := add(t, base+p, seq, k, node); err != nil {
				return err
			}
		}
		r.decoded.Add(int64(len(toks)))
	}
	if err := flush(); err != nil {
		return err
	}
	for k := i; k < j; k++ {
		t, from := sw.Trees[k], r.branchSeqs[first[k-i]]
		start := base + len(sw.Branches[k])
		for n, path := range t.Paths {
			seq := r.branchSeqs[first[k-i]+1+n]
			r.ctx.ClearSequence(seq)
			if err := r.ctx.CopyTokens(from, seq, 0, -1); err != nil {
				return err
			}
			for p, tok := range path {
				if err := add(tok, start+p, seq, k, t.Reads[n][p]); err != nil {
					return err
				}
			}
			r.decoded.Add(int64(len(path)))
		}
	}
	if err := flush(); err != nil {
		return err
	}
	for k := i; k < j; k++ {
		lp, pr := sw.Trees[k].Score(edges[k-i])
		sw.Result.Branches[k] = BranchScore{LogProbs: lp, Probabilities: pr}
	}
	return nil
}
