//go:build cgo

package goengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/inferkit/inferkit/internal/backend"
	fsggml "github.com/ollama/ollama/fs/ggml"
	"github.com/ollama/ollama/kvcache"
	"github.com/ollama/ollama/ml"
	"github.com/ollama/ollama/model"
	"github.com/ollama/ollama/model/models/gemma3"
	"github.com/ollama/ollama/model/models/gemma4"
	"github.com/ollama/ollama/model/models/qwen3next"
	"github.com/ollama/ollama/tokenizer"

	// The architectures: each package registers its own with model.
	_ "github.com/ollama/ollama/model/models"
)

// Params configures Load. The zero value uses every CPU and reports no
// progress.
type Params struct {
	// Threads is the CPU threads of the Go engine's matrix work, for the
	// whole process (0: runtime.NumCPU).
	Threads int
	// Progress, if set, is called with the fraction loaded (0 to 1).
	// Returning false aborts the load.
	Progress func(fraction float32) bool
}

// Model is a model loaded in Ollama's Go engine. It implements
// backend.Model and is safe for concurrent use, but holds one memory: it
// has at most one Context open at a time. Its owner calls Close after the
// Context's.
type Model struct {
	path  string
	m     model.Model
	tok   tokenizer.Tokenizer
	vocab *tokenizer.Vocabulary
	kv    fs
	arch  string

	size, params uint64
	nextn        int // multi-token-prediction blocks after the model's own
	// mixes: the memory takes tokens of several sequences in one forward
	// pass and shares cells between them (an attention cache). Otherwise
	// (a recurrent state) every sequence decodes in a forward pass of its
	// own, and only whole sequences are copied.
	mixes bool

	pieces []string // the bytes of each token, as llama.cpp gives them (mendPieces)
	text   textTokens
	eog    []backend.Token
	isEOG  []bool

	grammarVocab vocabulary

	mu      sync.Mutex
	ctxMade bool // Ollama's cache cannot be made again once closed
	closed  bool
}

// ggmlCPU is held by every forward pass and memory operation of every
// Go-engine model, and while one is made. Ollama's ml/backend/ggml makes one
// CPU backend per device for the whole process and gives it to every model,
// and ggml's CPU backend computes each graph in one work buffer of its own,
// which it frees and makes larger when a graph needs more: two models
// computing at once wrote into each other's buffer (logits that are not
// numbers) and freed it under each other (heap corruption). The lock is as
// wide as that backend: the process. Models on the llama.cpp backend make
// CPU backends of their own and do not take it.
var ggmlCPU sync.Mutex

// fs is the metadata reader of Ollama's model files.
type fs interface {
	Architecture() string
	String(string, ...string) string
	Uint(string, ...uint32) uint32
	Ints(string, ...[]int32) []int32
	Value(key string) any
}

var (
	_ backend.Model           = (*Model)(nil)
	_ backend.ProjectorLoader = (*Model)(nil)
	_ backend.EncoderModel    = (*Model)(nil)
)

// Load loads the GGUF file at path. A panic inside Ollama's loader is
// returned as an error.
func Load(path string, p Params) (_ *Model, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("goengine: loading %s: %v", path, r)
		}
	}()
	threads := p.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	m := &Model{path: path}
	if err := m.measure(); err != nil {
		return nil, err
	}
	ggmlCPU.Lock() // New sets the shared CPU backend's thread count
	gm, err := model.New(path, ml.BackendParams{AllocMemory: true, NumThreads: threads})
	ggmlCPU.Unlock()
	if err != nil {
		if n := m.nextn; n > 0 {
			// Ollama's qwen3next takes every block past the model's own
			// for a layer, and refuses the multi-token-prediction blocks
			// (ollama/ollama#16282) before fix could drop them.
			return nil, fmt.Errorf("goengine: %s: %w (%v)", path, backend.Unsupported(backend.Ollama,
				fmt.Sprintf("%d multi-token-prediction blocks (nextn_predict_layers); convert the model without them", n)), err)
		}
		return nil, fmt.Errorf("goengine: %w", err)
	}
	m.m, m.kv = gm, gm.Backend().Config()
	ok := false
	defer func() {
		if !ok {
			gm.Backend().Close()
		}
	}()
	m.arch = m.kv.Architecture()
	if m.kv.Uint("pooling_type") != 0 {
		return nil, fmt.Errorf("goengine: %s: %w", path, backend.Unsupported(backend.Ollama, "encoder models (pooling_type)"))
	}
	tok, isTok := gm.(tokenizer.Tokenizer)
	if !isTok {
		return nil, fmt.Errorf("goengine: %s: the %s model has no tokenizer", path, m.arch)
	}
	m.tok, m.vocab = tok, tok.Vocabulary()
	if err := m.fix(); err != nil {
		return nil, err
	}
	if gm.Config().Cache == nil {
		return nil, fmt.Errorf("goengine: %s: the %s model keeps no cache", path, m.arch)
	}
	m.mixes = attentionOnly(gm.Config().Cache)
	m.readVocabulary()
	// Ollama reports progress from the goroutines that read the
	// weights: the caller's callback is called from one at a time.
	var progressMu sync.Mutex
	aborted := false
	loadCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := gm.Backend().Load(loadCtx, func(f float32) {
		progressMu.Lock()
		defer progressMu.Unlock()
		if p.Progress != nil && !aborted && !p.Progress(f) {
			aborted = true
			cancel()
		}
	}); err != nil && !errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("goengine: loading %s: %w", path, err)
	}
	if aborted { // Load returns after its goroutines: no lock needed
		return nil, fmt.Errorf("goengine: loading %s: aborted", path)
	}
	if pl, isPL := gm.(model.PostLoader); isPL {
		ggmlCPU.Lock()
		err := pl.PostLoad()
		ggmlCPU.Unlock()
		if err != nil {
			return nil, fmt.Errorf("goengine: %s: %w", path, err)
		}
	}
	ok = true
	return m, nil
}

// fix changes the model where Ollama's Go definition differs from
// llama.cpp's and from the upstream converter's files, before its cache is
// made.
func (m *Model) fix() error {
	switch gm := m.m.(type) {
	case *gemma3.Model:
		// kvcache's sliding window attends window+1 positions; llama.cpp
		// and the reference attend window. Every cell is kept, as the
		// llama.cpp backend keeps them, so that prefixes of any length
		// are reused.
		gm.Cache = slidingCache(m.kv.Uint("attention.sliding_window"), gm.TextModel.Shift)
	case *gemma4.Model:
		gm.Cache = slidingCache(m.kv.Uint("attention.sliding_window"), gm.Shift)
	case *qwen3next.Model:
		// The upstream converter can append the multi-token-prediction
		// blocks after the model's own (block_count counts them); the
		// Go model would run them as layers. Ollama's qwen3next takes
		// every block's kind from full_attention_interval over
		// block_count, and its Validate, inside model.New, refuses an
		// MTP block at a linear-attention index (that of every
		// published Qwen3.5) before this: only files whose MTP blocks
		// fall on attention indices get here. Its per-block kinds keep
		// block_count entries, which only that Validate reads.
		if n := m.nextn; n > 0 {
			if n >= len(gm.Layers) {
				return fmt.Errorf("goengine: %s: nextn_predict_layers %d of %d blocks", m.path, n, len(gm.Layers))
			}
			gm.Layers = gm.Layers[:len(gm.Layers)-n]
		}
	}
	return nil
}

// slidingCache is the memory of a model whose layers alternate between a
// sliding window of window positions and global attention.
func slidingCache(window uint32, shift func(ml.Context, int, ml.Tensor, ml.Tensor) (ml.Tensor, error)) kvcache.Cache {
	w := int32(max(window, 2) - 1)
	return kvcache.NewWrapperCache(kvcache.NewSWAMemCache(w, math.MaxInt32, shift), kvcache.NewCausalCache(shift))
}

// attentionOnly reports whether c is an attention cache, or caches of
// attention, which hold any tokens of any sequences.
func attentionOnly(c kvcache.Cache) bool {
	switch c.(type) {
	case *kvcache.Causal:
		return true
	case *kvcache.WrapperCache:
		// Ollama's models wrap a sliding window's cache and a global
		// one, both attention.
		return true
	}
	return false
}

// measure reads, from the file's header, the weights' size and count and
// the multi-token-prediction blocks of a qwen35 file.
func (m *Model) measure() error {
	f, err := os.Open(m.path)
	if err != nil {
		return fmt.Errorf("goengine: %w", err)
	}
	defer f.Close()
	g, err := fsggml.Decode(f, 0)
	if err != nil {
		return fmt.Errorf("goengine: %s: %w", m.path, err)
	}
	for _, t := range g.Tensors().Items() {
		m.params += t.Elements()
		m.size += t.Size()
	}
	m.nextn = int(g.KV().Uint("nextn_predict_layers"))
	return nil
}

// eogTexts are the texts of control tokens that end generation, as
// llama.cpp recognises them beside the file's end-of-sequence ids.
var eogTexts = []string{
	"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
	"<|end_of_text|>", "<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>", "<|return|>", "<|call|>",
	"<turn|>", "</s>",
}

// readVocabulary reads what tokenizing and sampling need of the vocabulary.
func (m *Model) readVocabulary() {
	v := m.vocab
	n := len(v.Values)
	m.pieces = make([]string, n)
	m.isEOG = make([]bool, n)
	texts := map[string]backend.Token{}
	for i := range n {
		id := backend.Token(i)
		if m.typeOf(id) == tokenizer.TOKEN_TYPE_CONTROL {
			texts[v.Values[i]] = id
			continue
		}
		m.pieces[i], _ = m.tok.Decode([]int32{id})
	}
	m.readTextTokens()
	for _, id := range v.EOS {
		if m.valid(id) {
			m.isEOG[id] = true
		}
	}
	// gpt-oss ends a message with <|end|> and the turn with <|return|>
	// or <|call|>: there, <|end|> does not end generation.
	harmony := false
	if _, ok := texts["<|return|>"]; ok {
		_, harmony = texts["<|call|>"]
	}
	for _, s := range eogTexts {
		if id, ok := texts[s]; ok && !(harmony && s == "<|end|>") {
			m.isEOG[id] = true
		}
	}
	for i, e := range m.isEOG {
		if e {
			m.eog = append(m.eog, backend.Token(i))
		}
	}
}

func (m *Model) typeOf(t backend.Token) int32 {
	if int(t) < len(m.vocab.Types) {
		return m.vocab.Types[t]
	}
	return tokenizer.TOKEN_TYPE_NORMAL
}

func (m *Model) valid(t backend.Token) bool { return t >= 0 && int(t) < len(m.vocab.Values) }

// Backend returns backend.Ollama.
func (m *Model) Backend() string { return backend.Ollama }

// VocabSize is the number of tokens in the vocabulary.
func (m *Model) VocabSize() int { return len(m.vocab.Values) }

// TrainContext is <arch>.context_length.
func (m *Model) TrainContext() int { return int(m.kv.Uint("context_length")) }

// EmbeddingSize is <arch>.embedding_length.
func (m *Model) EmbeddingSize() int { return int(m.kv.Uint("embedding_length")) }

// Size is the bytes of the file's tensors.
func (m *Model) Size() uint64 { return m.size }

// Params is the number of the file's tensor elements.
func (m *Model) Params() uint64 { return m.params }

// Meta returns the metadata value of key (the full GGUF key) as text:
// numbers in decimal, arrays in JSON.
func (m *Model) Meta(key string) (string, bool) {
	v := m.kv.Value(key)
	if v == nil {
		return "", false
	}
	return metaText(v), true
}

func metaText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float32:
		return strconv.FormatFloat(float64(v), 'f', -1, 32)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case json.Marshaler: // Ollama's arrays
		if b, err := v.MarshalJSON(); err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// ChatTemplate is tokenizer.chat_template, or "".
func (m *Model) ChatTemplate() string { return m.kv.String("tokenizer.chat_template") }

// Pooling is always PoolingNone: encoder models run on llama.cpp.
func (m *Model) Pooling() backend.Pooling { return backend.PoolingNone }

// HeadDims are <arch>.attention.key_length and value_length, or the
// embedding width over the heads.
func (m *Model) HeadDims() (k, v int) {
	heads := int(m.kv.Uint("attention.head_count"))
	if heads <= 0 {
		return 0, 0
	}
	k = int(m.kv.Uint("attention.key_length", uint32(m.EmbeddingSize()/heads)))
	v = int(m.kv.Uint("attention.value_length", uint32(k)))
	return k, v
}

// SharesKV reports whether the model's memory is attention alone.
func (m *Model) SharesKV() bool { return m.mixes }

// BOS is the first beginning-of-sequence id, or -1.
func (m *Model) BOS() backend.Token { return first(m.vocab.BOS) }

// EOS is the first end-of-sequence id, or -1.
func (m *Model) EOS() backend.Token { return first(m.vocab.EOS) }

func first(ids []int32) backend.Token {
	if len(ids) == 0 {
		return -1
	}
	return ids[0]
}

// AddsBOS is tokenizer.ggml.add_bos_token.
func (m *Model) AddsBOS() bool { return m.vocab.AddBOS && len(m.vocab.BOS) > 0 }

// IsEOG reports whether t ends generation.
func (m *Model) IsEOG(t backend.Token) bool { return m.valid(t) && m.isEOG[t] }

// EOGTokens lists the tokens that end generation.
func (m *Model) EOGTokens() []backend.Token { return m.eog }

// IsControl reports whether t is a control token.
func (m *Model) IsControl(t backend.Token) bool {
	return m.valid(t) && m.typeOf(t) == tokenizer.TOKEN_TYPE_CONTROL
}

// TokenText returns t's vocabulary entry, or "" for an id outside it.
func (m *Model) TokenText(t backend.Token) string {
	if !m.valid(t) {
		return ""
	}
	return m.vocab.Values[t]
}

// Piece returns the bytes t stands for; a control or unknown token's text
// only when special is set.
func (m *Model) Piece(t backend.Token, special bool) []byte {
	if !m.valid(t) {
		return nil
	}
	if m.IsControl(t) || m.typeOf(t) == tokenizer.TOKEN_TYPE_UNKNOWN {
		if !special {
			return nil
		}
		return []byte(m.vocab.Values[t])
	}
	return []byte(m.pieces[t])
}

// NewGrammar compiles gbnf against the vocabulary, with llama.cpp's
// grammar engine.
func (m *Model) NewGrammar(gbnf string) (backend.Grammar, error) {
	return newGrammar(m, gbnf)
}

// NewSampler makes a sampler over the model's vocabulary.
func (m *Model) NewSampler(p backend.SamplerParams) (backend.Sampler, error) {
	s, err := newSampler(m, p)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// NewContext makes the model's one context: its memory, for p.Sequences
// sequences sharing p.Context cells. A model makes one context in its life
// (Ollama's cache is made with the model and cannot be made again): a
// second call is an error.
func (m *Model) NewContext(p backend.ContextParams) (backend.Context, error) {
	c, err := newContext(m, p)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// LoadProjector fails with an error wrapping backend.ErrUnsupported: the
// Go engine reads no images here.
func (m *Model) LoadProjector(path string, threads int) (backend.Projector, error) {
	return nil, backend.Unsupported(backend.Ollama, "images")
}

// NewEncoder fails with an error wrapping backend.ErrUnsupported: the Go
// engine runs no encoder models here (Pooling is always PoolingNone).
func (m *Model) NewEncoder(p backend.ContextParams) (backend.Encoder, error) {
	return nil, backend.Unsupported(backend.Ollama, "encoder models ("+p.Pooling.String()+" pooling)")
}

// Specials returns nothing: the Go engine runs no encoders (NewEncoder).
func (m *Model) Specials() (open, closing []backend.Token) { return nil, nil }

// Close frees the model; its Context must be closed first.
func (m *Model) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.closed = true
	m.m.Backend().Close()
}

// errClosed is returned by methods of a closed model.
var errClosed = errors.New("goengine: the model is closed")
