package fakebackend

import (
	"errors"
	"slices"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/backend/backendtest"
)

func TestTokenize(t *testing.T) {
	m := New(Options{AddBOS: true})
	for _, c := range []struct {
		name string
		segs []backend.Segment
		want []backend.Token
	}{
		{"markup", []backend.Segment{{Text: "<|im_start|>a"}}, []backend.Token{BOS, ImStart, 'a'}},
		{"data stays text", []backend.Segment{{Text: "<s>", Data: true}}, []backend.Token{BOS, '<', 's', '>'}},
		{"both", []backend.Segment{{Text: "</s>"}, {Text: "</s>", Data: true}}, []backend.Token{BOS, EOS, '<', '/', 's', '>'}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := m.TokenizeSegments(c.segs, true, 0)
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("got %v, %v; want %v", got, err, c.want)
			}
			var text []byte
			for _, tok := range got {
				text = append(text, m.Piece(tok, true)...)
			}
			var want string
			for _, s := range c.segs {
				want += s.Text
			}
			if string(text) != "<s>"+want {
				t.Errorf("pieces %q, want %q", text, "<s>"+want)
			}
		})
	}
	if _, err := m.TokenizeSegments([]backend.Segment{{Text: "abcd"}}, false, 3); !errors.Is(err, backend.ErrTooManyTokens) {
		t.Errorf("over the limit: %v", err)
	}
}

func decode(t *testing.T, c backend.Context, toks []backend.Token, pos int, seqs ...int) []float32 {
	t.Helper()
	b := c.NewBatch(len(toks))
	for i, tok := range toks {
		if _, err := b.Add(tok, pos+i, seqs, i == len(toks)-1); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Decode(b); err != nil {
		t.Fatal(err)
	}
	return slices.Clone(c.Logits(len(toks) - 1))
}

// The logits follow a sequence's tokens, whether decoded, copied or
// restored from a state, and the cells are counted once however many
// sequences share them.
func TestContextBookkeeping(t *testing.T) {
	m := New(Options{})
	bc, _ := m.NewContext(backend.ContextParams{Context: 8, Sequences: 3})
	c := bc.(*Context)
	want := decode(t, c, []backend.Token{'a', 'b', 'c'}, 0, 0)
	if err := c.CopyTokens(0, 1, 0, 2); err != nil {
		t.Fatal(err)
	}
	if c.Used() != 3 || c.MaxPos(1) != 1 {
		t.Fatalf("used %d, seq 1 to %d; want 3 and 1", c.Used(), c.MaxPos(1))
	}
	if got := decode(t, c, []backend.Token{'c'}, 2, 1); !slices.Equal(got, want) {
		t.Error("logits after a copied prefix differ from the sequence decoded whole")
	}
	other := decode(t, c, []backend.Token{'a', 'b', 'd'}, 0, 2)
	if slices.Equal(other, want) {
		t.Error("different sequences, same logits")
	}
	if c.Used() != 7 {
		t.Errorf("used %d, want 7", c.Used())
	}
	b := c.NewBatch(2)
	b.Add('x', 3, []int{0}, false)
	b.Add('y', 4, []int{0}, false)
	if err := c.Decode(b); err == nil {
		t.Error("decode past the cells succeeded")
	}
	gap := c.NewBatch(1)
	gap.Add('x', 5, []int{0}, false)
	if err := c.Decode(gap); err == nil {
		t.Error("decode leaving a gap succeeded")
	}
	state, err := c.SequenceState(0)
	if err != nil || len(state) != c.SequenceStateSize(0) {
		t.Fatal(len(state), err)
	}
	c.ClearSequence(2)
	if err := c.SetSequenceState(2, state[:len(state)-1]); !errors.Is(err, backend.ErrBadState) {
		t.Errorf("a cut state: %v", err)
	}
	if err := c.SetSequenceState(2, state); err != nil {
		t.Fatal(err)
	}
	if !c.RemoveTokens(2, 2, -1) || c.MaxPos(2) != 1 || c.RemoveTokens(2, 0, 1) {
		t.Error("RemoveTokens: a cut to the end, then refuse a hole")
	}
	if got := decode(t, c, []backend.Token{'c'}, 2, 2); !slices.Equal(got, want) {
		t.Error("logits after a restored state differ")
	}
	c.Clear()
	if c.Used() != 0 {
		t.Errorf("used %d after Clear", c.Used())
	}
}

func TestSampler(t *testing.T) {
	m := New(Options{})
	c, _ := m.NewContext(backend.ContextParams{Context: 8})
	logits := decode(t, c, []backend.Token{'h', 'i'}, 0, 0)
	best := backend.Token(slices.Index(logits, slices.Max(logits)))
	g, _ := m.NewSampler(backend.SamplerParams{})
	if got := g.Sample(c, 1, nil); got != best {
		t.Errorf("greedy %d, want %d", got, best)
	}
	banned, _ := m.NewSampler(backend.SamplerParams{Ban: []backend.Token{best}})
	if got := banned.Sample(c, 1, nil); got == best {
		t.Error("greedy picked a banned token")
	}
	draw := func(seed uint32) []backend.Token {
		s, _ := m.NewSampler(backend.SamplerParams{Temperature: 1, Seed: seed})
		var out []backend.Token
		for range 20 {
			out = append(out, s.Sample(c, 1, nil))
		}
		return out
	}
	if !slices.Equal(draw(1), draw(1)) || slices.Equal(draw(1), draw(2)) {
		t.Error("seeded sampling: the same seed must repeat, another differ")
	}
	if _, err := m.NewGrammar("root ::= \"a\""); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("NewGrammar: %v", err)
	}
}

// The recurrent fake takes checkpoints that keep the seam's promises; the
// attention one takes none.
func TestCheckpoints(t *testing.T) {
	for _, recurrent := range []bool{true, false} {
		m := New(Options{Recurrent: recurrent})
		ctx, err := m.NewContext(backend.ContextParams{Context: 256, Sequences: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !recurrent {
			if backend.FindCheckpointer(ctx) != nil {
				t.Error("an attention model takes checkpoints")
			}
			continue
		}
		backendtest.Checkpoints(t, m, ctx)
	}
}
