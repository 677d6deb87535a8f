package llamacpp

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/cgo"
	"sync"
	"unsafe"

	"github.com/inferkit/inferkit/internal/backend"
)

// Token is a token id of a model's vocabulary (backend.Token).
type Token = backend.Token

// ModelParams configures LoadModel. The zero value maps the file with mmap
// and reports no progress.
type ModelParams struct {
	// Progress, if set, is called with the fraction loaded (0 to 1) from the
	// loading goroutine. Returning false aborts the load.
	Progress func(fraction float32) bool
	// NoMmap reads the weights into memory instead of mapping the file.
	NoMmap bool
}

// Model is a loaded GGUF model. It is safe for concurrent use; Close frees it
// once every Context made from it is closed.
type Model struct {
	c      *C.struct_llama_model
	vocab  *C.struct_llama_vocab
	nVocab int

	eogOnce sync.Once
	eog     []Token

	tok vocabState
}

// LoadModel loads the GGUF file at path.
func LoadModel(path string, p ModelParams) (*Model, error) {
	initBackend()
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("llamacpp: %w", err)
	}
	params := C.llama_model_default_params()
	params.n_gpu_layers = 999
	params.use_mmap = C.bool(!p.NoMmap)
	if p.Progress != nil {
		h := cgo.NewHandle(p.Progress)
		defer h.Delete()
		C.inferkit_set_progress(&params, C.uintptr_t(h))
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	m := C.llama_model_load_from_file(cpath, params)
	if m == nil {
		return nil, fmt.Errorf("llamacpp: cannot load model %s (not a GGUF file llama.cpp supports, or the load was aborted)", path)
	}
	vocab := C.llama_model_get_vocab(m)
	return &Model{c: m, vocab: vocab, nVocab: int(C.llama_vocab_n_tokens(vocab))}, nil
}

// Close frees the model.
func (m *Model) Close() {
	if m.c != nil {
		C.llama_model_free(m.c)
		m.c = nil
	}
}

// VocabSize is the number of tokens in the vocabulary.
func (m *Model) VocabSize() int { return m.nVocab }

// TrainContext is the context length the model was trained with.
func (m *Model) TrainContext() int { return int(C.llama_model_n_ctx_train(m.c)) }

// EmbeddingSize is the width of the model's hidden state.
func (m *Model) EmbeddingSize() int { return int(C.llama_model_n_embd(m.c)) }

// ClassifierOutputs is the number of outputs of the model's classifier
// head (1 for a reranker).
func (m *Model) ClassifierOutputs() int { return int(C.llama_model_n_cls_out(m.c)) }

// SEP is the separator token, or -1 when the vocabulary has none.
func (m *Model) SEP() Token { return Token(C.llama_vocab_sep(m.vocab)) }

// AddsSEP reports whether the vocabulary puts SEP after a text (BERT).
func (m *Model) AddsSEP() bool { return bool(C.llama_vocab_get_add_sep(m.vocab)) }

// AddsEOS reports whether tokenizing adds EOS after the text.
func (m *Model) AddsEOS() bool { return bool(C.llama_vocab_get_add_eos(m.vocab)) }

// Size is the number of bytes of the model's tensors.
func (m *Model) Size() uint64 { return uint64(C.llama_model_size(m.c)) }

// Params is the number of parameters.
func (m *Model) Params() uint64 { return uint64(C.llama_model_n_params(m.c)) }

// Meta returns the GGUF metadata value of key as a string.
func (m *Model) Meta(key string) (string, bool) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	buf := make([]byte, 256)
	for {
		n := C.llama_model_meta_val_str(m.c, ckey, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
		if n < 0 {
			return "", false
		}
		if int(n) < len(buf) {
			return string(buf[:n]), true
		}
		buf = make([]byte, int(n)+1)
	}
}

// Pooling is the pooling that the GGUF asks for (<arch>.pooling_type):
// PoolingNone for a generative model or a file that names none.
func (m *Model) Pooling() Pooling {
	return backend.MetaPooling(m.Meta)
}

// ChatTemplate returns the model's default Jinja chat template, or "" when
// the file has none.
func (m *Model) ChatTemplate() string {
	t := C.llama_model_chat_template(m.c, nil)
	if t == nil {
		return ""
	}
	return C.GoString(t)
}

// BOS is the beginning-of-sequence token, or -1.
func (m *Model) BOS() Token { return Token(C.llama_vocab_bos(m.vocab)) }

// EOS is the end-of-sequence token, or -1.
func (m *Model) EOS() Token { return Token(C.llama_vocab_eos(m.vocab)) }

// AddsBOS reports whether tokenizing with special tokens prepends BOS.
func (m *Model) AddsBOS() bool { return bool(C.llama_vocab_get_add_bos(m.vocab)) }

// IsEOG reports whether t ends generation (EOS, EOT and their kin).
func (m *Model) IsEOG(t Token) bool { return bool(C.llama_vocab_is_eog(m.vocab, C.llama_token(t))) }

// SharesKV reports whether the model's memory lets sequences share a
// prompt prefix by a partial copy or by decoding a token for several
// sequences at once. Recurrent and hybrid models keep one state per
// sequence, which cannot be cut back to a prefix: on those, llama.cpp
// refuses coupled sequences. Sliding-window models share: their contexts
// keep every cell (see NewContext).
func (m *Model) SharesKV() bool {
	return !bool(C.llama_model_is_recurrent(m.c)) && !bool(C.llama_model_is_hybrid(m.c))
}

// MRoPE reports whether the model places tokens with multi-section
// rotary positions (Qwen2-VL and its successors): an image's tokens then
// take 2-D positions (Batch.AddGridEmbedding).
func (m *Model) MRoPE() bool {
	switch C.llama_model_rope_type(m.c) {
	case C.LLAMA_ROPE_TYPE_MROPE, C.LLAMA_ROPE_TYPE_IMROPE:
		return true
	}
	return false
}

// EOGTokens lists the tokens that end generation.
func (m *Model) EOGTokens() []Token {
	m.eogOnce.Do(func() {
		for t := range Token(m.nVocab) {
			if m.IsEOG(t) {
				m.eog = append(m.eog, t)
			}
		}
	})
	return m.eog
}

// IsControl reports whether t is a control token, which has no text.
func (m *Model) IsControl(t Token) bool {
	return bool(C.llama_vocab_is_control(m.vocab, C.llama_token(t)))
}

// TokenText returns the vocabulary entry of t, as stored in the GGUF.
func (m *Model) TokenText(t Token) string {
	if !m.valid(t) {
		return ""
	}
	return C.GoString(C.llama_vocab_get_text(m.vocab, C.llama_token(t)))
}

func (m *Model) valid(t Token) bool { return t >= 0 && int(t) < m.nVocab }

// Piece returns the bytes that token t stands for. A piece may hold part of
// a UTF-8 character. Control tokens give their text only when special is
// set.
func (m *Model) Piece(t Token, special bool) []byte {
	if !m.valid(t) {
		return nil
	}
	var stack [64]byte
	buf := stack[:]
	for {
		n := C.llama_token_to_piece(m.vocab, C.llama_token(t), (*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf)), 0, C.bool(special))
		if n >= 0 {
			return append([]byte(nil), buf[:n]...)
		}
		buf = make([]byte, int(-n))
	}
}

// HeadDims returns the width of the attention heads' keys and values:
// <arch>.attention.key_length and value_length, or the embedding width
// over the heads where the GGUF leaves them out, as llama.cpp reads them.
// They are 0 for a model without attention heads.
func (m *Model) HeadDims() (k, v int) {
	return backend.MetaHeadDims(m.Meta, m.EmbeddingSize(), int(C.llama_model_n_head(m.c)))
}
