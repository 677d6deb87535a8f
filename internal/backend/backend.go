// Package backend is the seam between the inference engine and the
// libraries that run a model: llama.cpp (internal/llamacpp) and Ollama's Go
// engine (internal/goengine). It holds the interfaces the runner (internal/runner)
// needs and the parameter types both sides share, and nothing that needs
// cgo.
//
// The seam is shaped by what the runner does, not by either library: it
// loads a model, tokenizes prompts whose request text stays text, decodes
// batches of tokens for many sequences at once, copies and trims each
// sequence's memory to reuse prompt prefixes, reads logits and samples, under
// a grammar when asked. Beside decoding, smaller interfaces hold what some
// models need: a Projector turns images into rows of input embeddings,
// which an EmbeddingContext decodes; an EncoderModel's Encoder pools the
// outputs of rerankers and embedding models; LogSumExp normalises logits.
// A capability one backend lacks is a method that fails with an error
// wrapping ErrUnsupported and naming it, so that the engine can refuse the
// request that needs it.
//
// A new backend touches three places: its folder under internal/, whose
// types implement these interfaces (and fail the optional ones it cannot
// serve); its name among the constants below; and its case in the
// engine's loader (inference/loader.go), the one file that imports
// backends. The runner (internal/runner) and the rest of the engine
// reach a backend through these interfaces only, so they need no edit;
// neither does the import test (internal/layers), which takes the
// backends from the loader's imports.
package backend

import (
	"errors"
	"fmt"
)

// The backends' names, as Model.Backend gives them.
const (
	LlamaCpp = "llama.cpp" // internal/llamacpp
	Ollama   = "ollama"    // internal/goengine: Ollama's Go engine
	LibLlama = "libllama"  // internal/libllama: a llama.cpp library loaded at run time
)

// Token is a token id of a model's vocabulary.
type Token = int32

// Segment is a piece of prompt text.
type Segment struct {
	Text string
	// Data marks text that came from a request: the text of control
	// tokens in it stays text. In other segments (a chat template's
	// markup) it becomes those tokens. The text of user-defined tokens
	// becomes those tokens in both, as Hugging Face tokenizers do.
	Data bool
}

// ErrTooManyTokens is returned, wrapped, when a text gives more tokens
// than the limit given to Model.TokenizeSegments.
var ErrTooManyTokens = errors.New("more tokens than the limit")

// ErrUnsupported is returned, wrapped in an error that names the
// capability, when a backend cannot do what was asked of it.
var ErrUnsupported = errors.New("not supported by this backend")

// ErrBadState is returned, wrapped in an error that names the field, by
// Context.SetSequenceState for a state that is not one the context's
// model and settings could have written: damaged, cut short, another
// model's, or another program's bytes. The state is refused before the
// backend's own code reads it; a caller that keeps states on disk removes
// one refused so. Another error (no free cells for now) says nothing
// about the state.
var ErrBadState = errors.New("not a sequence state of this model")

// Model is a loaded model. Its methods are safe for concurrent use; the
// owner calls Close once every Context, Sampler and Grammar made from it
// is closed.
type Model interface {
	// Backend names the library that runs the model: LlamaCpp, Ollama
	// or LibLlama.
	Backend() string

	VocabSize() int
	// TrainContext is the context length the model was trained for.
	TrainContext() int
	// EmbeddingSize is the width of the model's hidden states.
	EmbeddingSize() int
	// Size is the bytes of the model's weights; Params their number.
	Size() uint64
	Params() uint64
	// Meta returns a GGUF metadata value as text.
	Meta(key string) (string, bool)
	// ChatTemplate is the GGUF's tokenizer.chat_template, or "".
	ChatTemplate() string
	// Pooling is the model's own pooling: PoolingNone for a generative
	// model.
	Pooling() Pooling
	// HeadDims returns the width of the attention heads' keys and values,
	// 0 for a model without attention.
	HeadDims() (k, v int)
	// SharesKV reports whether sequences may share a prompt prefix by a
	// partial copy (Context.CopyTokens up to a position) or by a token
	// decoded for several sequences at once.
	SharesKV() bool

	BOS() Token
	EOS() Token
	// AddsBOS reports whether prompts start with BOS.
	AddsBOS() bool
	// IsEOG reports whether t ends generation (EOS, EOT and their kin).
	IsEOG(t Token) bool
	// EOGTokens lists the tokens that end generation.
	EOGTokens() []Token
	// IsControl reports whether t is a control token, which has no text.
	IsControl(t Token) bool
	// TokenText returns the vocabulary entry of t, as stored in the GGUF.
	TokenText(t Token) string
	// Piece returns the bytes that t stands for; a piece may hold part of
	// a UTF-8 character. Control tokens give their text only when
	// special is set.
	Piece(t Token, special bool) []byte

	// TokenizeSegments tokenizes a prompt of segments, after BOS when
	// addBOS is set and the model adds one. With limit > 0, more tokens
	// than limit is an error wrapping ErrTooManyTokens, returned without
	// tokenizing the rest.
	TokenizeSegments(segs []Segment, addBOS bool, limit int) ([]Token, error)
	// Tokenize tokenizes text alone; special makes control tokens' text
	// those tokens.
	Tokenize(text string, special bool) ([]Token, error)
	// ReplaceControlText replaces, in text, the text of every control
	// token with repl's string for it.
	ReplaceControlText(text string, repl func(Token) string) string

	// NewContext makes a context over the model; its caller closes it.
	NewContext(p ContextParams) (Context, error)
	// NewSampler makes a sampler; its caller closes it.
	NewSampler(p SamplerParams) (Sampler, error)
	// NewGrammar compiles a GBNF grammar (root rule "root") against the
	// vocabulary; its caller closes it.
	NewGrammar(gbnf string) (Grammar, error)

	Close()
}

// Context holds the memory (the KV cache, or a recurrent state) of a
// model's sequences and decodes batches. It is not safe for concurrent use.
// Its owner must call Close.
type Context interface {
	// Size is the memory's cells, shared by all sequences.
	Size() int
	// BatchSize is the most tokens Decode takes at once.
	BatchSize() int
	// NewBatch makes a batch of up to n tokens for this context; its
	// caller closes it.
	NewBatch(n int) Batch
	// Decode runs the model over b. After an error, what the batch's
	// sequences hold is unknown: the caller clears them.
	Decode(b Batch) error
	// Logits returns the logits of batch index i of the last Decode, a
	// slice of VocabSize valid until the next Decode.
	Logits(i int) []float32

	// RemoveTokens removes positions [from, to) of seq (to < 0: to the
	// end). False means the memory could not cut there (a recurrent
	// state), and it is unchanged.
	RemoveTokens(seq, from, to int) bool
	// CopyTokens makes dst hold src's positions [from, to) (to < 0: to
	// the end). Without SharesKV only whole copies (0, -1) are allowed.
	CopyTokens(src, dst, from, to int) error
	// ClearSequence empties seq; Clear empties every sequence.
	ClearSequence(seq int)
	Clear()
	// MaxPos is the last position seq holds, -1 when empty.
	MaxPos(seq int) int

	// SequenceStateSize, SequenceState and SetSequenceState save and
	// restore one sequence's memory. A backend that cannot returns 0 and
	// errors wrapping ErrUnsupported. SetSequenceState checks the state
	// before it uses it, and refuses one it could not have written with
	// an error wrapping ErrBadState; it never crashes on one.
	SequenceStateSize(seq int) int
	SequenceState(seq int) ([]byte, error)
	SetSequenceState(seq int, state []byte) error

	Close()
}

// Batch is the tokens of one Decode. It is not safe for concurrent use; its
// owner must call Close.
type Batch interface {
	// Add appends token t at position pos of the sequences seqs, which
	// all take it; logits asks for its logits. It returns the token's
	// index, which Context.Logits reads.
	Add(t Token, pos int, seqs []int, logits bool) (int, error)
	Len() int
	Cap() int
	Clear()
	Close()
}

// Sampler picks the next token from a context's logits. It is not safe for
// concurrent use; its owner must call Close.
type Sampler interface {
	// Sample picks a token from the logits of batch index i of ctx's last
	// Decode, under g when it is not nil, and accepts it. It returns -1
	// when g admits no token.
	Sample(ctx Context, i int, g Grammar) Token
	Close()
}

// Grammar constrains sampling to the strings of a GBNF grammar. It is
// stateful, advanced by the tokens sampled under it, and not safe for
// concurrent use; its owner must call Close.
type Grammar interface {
	Close()
}

// Checkpointer is a Context whose memory holds a recurrent state (a
// recurrent or hybrid model: Mamba, Jamba, Qwen3.5's linear-attention
// layers), which RemoveTokens cannot cut back, and which can save that
// state alone and put it back. A caller keeps checkpoints of a sequence
// at chosen positions and, where a later prompt shares only part of what
// the sequence holds, returns it to the checkpoint at or below the shared
// prefix instead of clearing it. A Context implements it only where both
// work; FindCheckpointer finds it.
//
// A checkpoint holds the recurrent part only: the attention layers' cells
// of a hybrid model stay in the sequence, cut back when it is restored.
// It is the sequence's own: restoring it into another sequence, or after
// the sequence was cleared or given other tokens below its position, is
// the caller's error, which the backend refuses where it can tell.
type Checkpointer interface {
	// Checkpoint returns the recurrent state of seq as it is now, after
	// the MaxPos(seq)+1 positions it holds: a checkpoint at that many
	// tokens.
	Checkpoint(seq int) ([]byte, error)
	// RestoreCheckpoint makes seq hold its first n positions: its
	// recurrent state from state, which Checkpoint returned when seq
	// held n positions, and its attention cells (if any) cut back to n.
	// seq must hold at least n positions, the same tokens as then. The
	// state is checked before the backend reads it: one this context
	// could not have written for seq at n is refused with an error
	// wrapping ErrBadState, and seq is left as it was. After another
	// error, what seq holds is unknown: the caller clears it.
	RestoreCheckpoint(seq, n int, state []byte) error
}

// FindCheckpointer returns ctx as a Checkpointer when its memory holds a
// recurrent state that it can save and restore, or nil. A Context says so
// through a method Checkpoints() bool beside Checkpointer's two, since
// one backend's Context type serves attention models too (for which
// Checkpoints reports false). internal/backend/backendtest.Checkpoints
// checks an implementation.
func FindCheckpointer(ctx Context) Checkpointer {
	if c, ok := ctx.(interface {
		Checkpointer
		Checkpoints() bool
	}); ok && c.Checkpoints() {
		return c
	}
	return nil
}

// RollbackLimit returns how many of its last positions a sequence of
// ctx, a recurrent or hybrid model's context, can drop after a Decode
// (ContextParams.Rollback): 0 where its recurrent state cannot roll back
// at all. A Context reports it through a method RollbackLimit() int.
func RollbackLimit(ctx Context) int {
	if c, ok := ctx.(interface{ RollbackLimit() int }); ok {
		return max(c.RollbackLimit(), 0)
	}
	return 0
}

// SequenceStateLimit returns the most bytes a state that ctx's
// SetSequenceState accepts can take (a sequence holding every cell it
// may), so that a caller reading a stored state can refuse a longer one
// before it allocates for it; 0 when ctx cannot restore a state. A
// Context reports it through a method SequenceStateLimit() int64.
func SequenceStateLimit(ctx Context) int64 {
	if l, ok := ctx.(interface{ SequenceStateLimit() int64 }); ok {
		return l.SequenceStateLimit()
	}
	return 0
}

// Unsupported returns an error wrapping ErrUnsupported that names what
// the backend cannot do.
func Unsupported(backend, what string) error {
	return fmt.Errorf("%s: %s: %w", backend, what, ErrUnsupported)
}
