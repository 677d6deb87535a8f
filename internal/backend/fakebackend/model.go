// Package fakebackend is a pure-Go backend.Model for tests: a model with
// no weights whose logits are a hash of each sequence's tokens, so that
// the runner's scheduling, prefix reuse, branching and cancellation can be
// tested without cgo, in milliseconds.
//
// Its vocabulary is the 256 bytes (token b is byte b) and four control
// tokens: BOS "<s>", EOS "</s>", and ChatML's "<|im_start|>" and
// "<|im_end|>", the latter two also ending generation. Its chat template is
// ChatML. The logits of a token are a pure function of every token its
// sequence holds up to it and their positions, so an output differs as
// soon as the context's bookkeeping does: a cell missing, copied from the
// wrong sequence or left behind. The context keeps that bookkeeping for
// real: cells shared by the sequences that hold them, a fixed number of
// them (Decode fails when they run out), consecutive positions per
// sequence (Decode fails on a gap), partial copies, and sequence states
// as bytes that SetSequenceState checks before use.
//
// With Options.Recurrent it is a hybrid model instead: its memory cannot
// be cut back, and its context saves and restores checkpoints of each
// sequence's recurrent state (backend.Checkpointer), which it checks
// against the tokens the sequence holds.
//
// What it lacks: grammars (NewGrammar fails with backend.ErrUnsupported),
// images, encoders, and the samplers' repetition penalties, which it
// ignores.
package fakebackend

import (
	"fmt"
	"strings"

	"github.com/inferkit/inferkit/internal/backend"
)

// Name is what Model.Backend returns.
const Name = "fake"

// The control tokens, after the 256 byte tokens.
const (
	BOS      backend.Token = 256
	EOS      backend.Token = 257
	ImStart  backend.Token = 258
	ImEnd    backend.Token = 259
	vocabLen               = 260
)

var controlText = map[backend.Token]string{BOS: "<s>", EOS: "</s>", ImStart: "<|im_start|>", ImEnd: "<|im_end|>"}

// chatML is the model's chat template.
const chatML = `{% for message in messages %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}`

// Options configures a Model. The zero value is a model trained for 4096
// tokens that adds no BOS, so that a prompt's tokens are its bytes.
type Options struct {
	// TrainContext is the context the model reports it was trained for.
	// Default 4096.
	TrainContext int
	// AddBOS makes prompts start with BOS.
	AddBOS bool
	// Recurrent makes the model a hybrid one (Jamba's or Qwen3.5's
	// shape): besides its cells, each sequence keeps a recurrent state,
	// so its memory cannot be cut back (RemoveTokens refuses to cut a
	// sequence short, CopyTokens copies whole sequences only, SharesKV
	// is false) and a prefix is reused through checkpoints
	// (backend.Checkpointer) of CheckpointBytes bytes each (default 64,
	// at least 23).
	Recurrent       bool
	CheckpointBytes int
	// RollsBack makes a Recurrent model's context keep the snapshots
	// that ContextParams.Rollback asks for, as the current llama.cpp
	// does for Qwen3.5, with the contract internal/libllama enforces on
	// it: a sequence drops fewer of its last positions than its last
	// Decode gave it, at most Rollback, once; until its next Decode it
	// is neither copied nor checkpointed (ErrUnsupported).
	RollsBack bool
}

// Model is the fake model. Its methods are safe for concurrent use; Close
// does nothing and may be called any number of times.
type Model struct {
	opt Options
}

var _ backend.Model = (*Model)(nil)

// New returns a model with the options o.
func New(o Options) *Model {
	if o.TrainContext <= 0 {
		o.TrainContext = 4096
	}
	return &Model{opt: o}
}

// Backend returns Name.
func (m *Model) Backend() string { return Name }

// VocabSize is 260: the bytes and four control tokens.
func (m *Model) VocabSize() int { return vocabLen }

// TrainContext returns Options.TrainContext.
func (m *Model) TrainContext() int { return m.opt.TrainContext }

// EmbeddingSize is a nominal 16.
func (m *Model) EmbeddingSize() int { return 16 }

// Size and Params are a nominal 1024: the model has no weights.
func (m *Model) Size() uint64   { return 1024 }
func (m *Model) Params() uint64 { return 1024 }

// Meta knows general.architecture ("fake") and tokenizer.chat_template.
func (m *Model) Meta(key string) (string, bool) {
	switch key {
	case "general.architecture":
		return "fake", true
	case "general.name":
		return "fakebackend", true
	case "tokenizer.chat_template":
		return chatML, true
	}
	return "", false
}

// ChatTemplate returns a ChatML template.
func (m *Model) ChatTemplate() string { return chatML }

// Pooling is PoolingNone: the model generates.
func (m *Model) Pooling() backend.Pooling { return backend.PoolingNone }

// HeadDims returns a nominal 8, 8.
func (m *Model) HeadDims() (k, v int) { return 8, 8 }

// SharesKV is true: cells are shared by the sequences that hold them;
// false for a recurrent model.
func (m *Model) SharesKV() bool { return !m.opt.Recurrent }

func (m *Model) BOS() backend.Token { return BOS }
func (m *Model) EOS() backend.Token { return EOS }

// AddsBOS returns Options.AddBOS.
func (m *Model) AddsBOS() bool { return m.opt.AddBOS }

// IsEOG reports EOS and <|im_end|>.
func (m *Model) IsEOG(t backend.Token) bool { return t == EOS || t == ImEnd }

// EOGTokens lists EOS and <|im_end|>.
func (m *Model) EOGTokens() []backend.Token { return []backend.Token{EOS, ImEnd} }

// IsControl reports the four control tokens.
func (m *Model) IsControl(t backend.Token) bool { return t >= BOS && t < vocabLen }

// TokenText returns a byte's character (printable ASCII) or <0xXX>, and a
// control token's text.
func (m *Model) TokenText(t backend.Token) string {
	switch {
	case t >= 0 && t < 256 && t >= 0x20 && t < 0x7f:
		return string(rune(t))
	case t >= 0 && t < 256:
		return fmt.Sprintf("<0x%02X>", t)
	}
	return controlText[t]
}

// Piece returns a byte token's byte, and a control token's text when
// special is set.
func (m *Model) Piece(t backend.Token, special bool) []byte {
	switch {
	case t >= 0 && t < 256:
		return []byte{byte(t)}
	case special:
		return []byte(controlText[t])
	}
	return nil
}

// TokenizeSegments tokenizes segs: Data segments byte by byte, the others
// with control tokens' text made those tokens.
func (m *Model) TokenizeSegments(segs []backend.Segment, addBOS bool, limit int) ([]backend.Token, error) {
	var toks []backend.Token
	if addBOS && m.opt.AddBOS {
		toks = append(toks, BOS)
	}
	for _, s := range segs {
		toks = appendText(toks, s.Text, !s.Data)
		if limit > 0 && len(toks) > limit {
			return nil, fmt.Errorf("fakebackend: %w (%d)", backend.ErrTooManyTokens, limit)
		}
	}
	return toks, nil
}

// Tokenize tokenizes text; special makes control tokens' text those
// tokens.
func (m *Model) Tokenize(text string, special bool) ([]backend.Token, error) {
	return appendText(nil, text, special), nil
}

// appendText appends text's tokens to toks.
func appendText(toks []backend.Token, text string, special bool) []backend.Token {
	for len(text) > 0 {
		if special {
			if t, n := controlAt(text); n > 0 {
				toks = append(toks, t)
				text = text[n:]
				continue
			}
		}
		toks = append(toks, backend.Token(text[0]))
		text = text[1:]
	}
	return toks
}

// controlAt returns the control token whose text starts s, and its
// length; 0 when none does.
func controlAt(s string) (backend.Token, int) {
	if s[0] != '<' {
		return 0, 0
	}
	for t := BOS; t < vocabLen; t++ {
		if strings.HasPrefix(s, controlText[t]) {
			return t, len(controlText[t])
		}
	}
	return 0, 0
}

// ReplaceControlText replaces the text of every control token in text
// with repl's string for it.
func (m *Model) ReplaceControlText(text string, repl func(backend.Token) string) string {
	var b strings.Builder
	for len(text) > 0 {
		if t, n := controlAt(text); n > 0 {
			b.WriteString(repl(t))
			text = text[n:]
			continue
		}
		b.WriteByte(text[0])
		text = text[1:]
	}
	return b.String()
}

// NewContext makes a context of p.Context cells (default 4096) for
// p.Sequences sequences (default 1), decoding batches of up to p.Batch
// tokens (default 512). An encoder context (p.Pooling) is unsupported.
func (m *Model) NewContext(p backend.ContextParams) (backend.Context, error) {
	if p.Pooling != backend.PoolingNone {
		return nil, backend.Unsupported(Name, "encoder contexts")
	}
	if p.Context < 0 || p.Batch < 0 || p.Sequences < 0 {
		return nil, fmt.Errorf("fakebackend: context params %+v", p)
	}
	if p.Context == 0 {
		p.Context = 4096
	}
	if p.Batch == 0 {
		p.Batch = 512
	}
	if p.Sequences == 0 {
		p.Sequences = 1
	}
	c := &Context{size: p.Context, batch: p.Batch, seqs: make([][]*cell, p.Sequences)}
	if m.opt.Recurrent {
		c.ckptBytes = 64
		if m.opt.CheckpointBytes > 0 {
			c.ckptBytes = max(m.opt.CheckpointBytes, ckptHeader)
		}
		if m.opt.RollsBack {
			c.rollback = max(p.Rollback, 0)
			c.decoded = make([]int, p.Sequences)
			c.pending = make([]bool, p.Sequences)
		}
	}
	return c, nil
}

// NewSampler makes a sampler: greedy at Temperature <= 0, else seeded
// sampling under TopK, TopP and MinP. Ban's tokens are never picked; the
// penalties are ignored.
func (m *Model) NewSampler(p backend.SamplerParams) (backend.Sampler, error) {
	return newSampler(p), nil
}

// NewGrammar fails: the fake backend has no grammars.
func (m *Model) NewGrammar(string) (backend.Grammar, error) {
	return nil, backend.Unsupported(Name, "grammars")
}

// Close does nothing.
func (m *Model) Close() {}
