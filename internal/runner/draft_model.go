package runner

import (
	"fmt"

	"github.com/inferkit/inferkit/internal/backend"
)

// ModelDrafter is a Drafter that runs a second, smaller model of the same
// vocabulary greedily. Each of the runner's sequences has a sequence of
// the same id in the draft model's own context, kept in step with the
// target's: at each call the draft sequence drops what the target
// rejected, decodes what the target added, and drafts on from there. It
// is not safe for concurrent use (the runner's goroutine calls it); the
// runner it is given to closes it, and Close closes the context.
type ModelDrafter struct {
	llm   backend.Model
	ctx   backend.Context
	batch backend.Batch
	held  [][]backend.Token // by sequence: the tokens the draft context holds
}

// NewModelDrafter drafts for target with draft, in ctx, a context of
// draft with a sequence for each of the target runner's sequences, which
// it owns from then on (Close closes it). It fails, closing nothing,
// unless the two models' vocabularies are the same, token for token.
func NewModelDrafter(target, draft backend.Model, ctx backend.Context, sequences int) (*ModelDrafter, error) {
	if err := SameVocabulary(target, draft); err != nil {
		return nil, err
	}
	return &ModelDrafter{llm: draft, ctx: ctx, batch: ctx.NewBatch(ctx.BatchSize()), held: make([][]backend.Token, sequences)}, nil
}

// SameVocabulary returns an error, naming the first difference, unless
// a and b have the same tokens with the same ids, so that one may draft
// for the other.
func SameVocabulary(a, b backend.Model) error {
	if a.VocabSize() != b.VocabSize() {
		return fmt.Errorf("runner: the draft model's vocabulary has %d tokens, the model's %d: a draft model needs the same vocabulary", b.VocabSize(), a.VocabSize())
	}
	for t := range backend.Token(a.VocabSize()) {
		if a.TokenText(t) != b.TokenText(t) {
			return fmt.Errorf("runner: token %d is %q in the draft model, %q in the model: a draft model needs the same vocabulary", t, b.TokenText(t), a.TokenText(t))
		}
	}
	return nil
}

// Draft brings the draft sequence seq in step with tokens and appends up
// to k tokens it predicts greedily. A failure to decode (no free cells)
// empties the sequence and drafts nothing.
func (d *ModelDrafter) Draft(seq int, tokens []backend.Token, k int, buf []backend.Token) []backend.Token {
	if seq < 0 || seq >= len(d.held) || len(tokens) == 0 || k <= 0 {
		return buf
	}
	held := d.held[seq]
	n := 0
	for n < len(held) && n < len(tokens) && held[n] == tokens[n] {
		n++
	}
	n = min(n, len(tokens)-1) // the last token's logits draft the first
	if !d.ctx.RemoveTokens(seq, n, -1) {
		d.ctx.ClearSequence(seq)
		n = 0
	}
	held = held[:n]
	d.held[seq] = held
	for _, t := range tokens[n:] {
		if t < 0 {
			return buf // an image: the draft model cannot read it
		}
	}
	// Decode the new tokens, the logits of the last only.
	for n < len(tokens) {
		d.batch.Clear()
		m := min(d.batch.Cap(), len(tokens)-n)
		for i := range m {
			if _, err := d.batch.Add(tokens[n+i], n+i, []int{seq}, n+i == len(tokens)-1); err != nil {
				return d.fail(seq, buf)
			}
		}
		if err := d.ctx.Decode(d.batch); err != nil {
			return d.fail(seq, buf)
		}
		held = append(held, tokens[n:n+m]...)
		n += m
	}
	idx := d.batch.Len() - 1
	for i := range k {
		top := TopTokens(d.ctx.Logits(idx), 1)
		if len(top) == 0 {
			break
		}
		t := backend.Token(top[0])
		buf = append(buf, t)
		if i == k-1 || d.llm.IsEOG(t) {
			break
		}
		d.batch.Clear()
		var err error
		if idx, err = d.batch.Add(t, len(held), []int{seq}, true); err != nil {
			break
		}
		if err := d.ctx.Decode(d.batch); err != nil {
			d.held[seq] = held
			return d.fail(seq, buf)
		}
		held = append(held, t)
	}
	d.held[seq] = held
	return buf
}

// fail empties seq after a failed decode, whose effect is unknown, and
// returns buf, with the tokens drafted before the failure.
func (d *ModelDrafter) fail(seq int, buf []backend.Token) []backend.Token {
	d.ctx.ClearSequence(seq)
	d.held[seq] = d.held[seq][:0]
	return buf
}

// Close frees the draft context.
func (d *ModelDrafter) Close() {
	d.batch.Close()
	d.ctx.Close()
}
