package libllama

/*
#include <stdlib.h>
#include "api.h"
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

// ModelParams configures LoadModel. The zero value maps the file with
// mmap and reports no progress.
type ModelParams struct {
	// Progress, if set, is called with the fraction loaded (0 to 1) from
	// the loading goroutine. Returning false aborts the load.
	Progress func(fraction float32) bool
	// NoMmap reads the weights into memory instead of mapping the file.
	NoMmap bool
}

// Model is a GGUF model loaded by a Library. It is safe for concurrent
// use; Close frees it once every Context, Sampler and Grammar made from
// it is closed.
type Model struct {
	lib    *Library
	api    *C.struct_ikl_api
	c      *C.struct_llama_model
	vocab  *C.struct_llama_vocab
	nVocab int

	eogOnce sync.Once
	eog     []Token

	vocabOnce sync.Once
	tokVocab  *vocabulary
}

// LoadModel loads the GGUF file at path with lib.
func (lib *Library) LoadModel(path string, p ModelParams) (*Model, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("libllama: %w", err)
	}
	api := lib.api
	var params C.struct_llama_model_params
	C.ikl_model_defaults(api, &params)
	params.n_gpu_layers = 999
	params.load_mode = C.IKL_LOAD_MODE_MMAP
	if p.NoMmap {
		params.load_mode = C.IKL_LOAD_MODE_NONE
	}
	if p.Progress != nil {
		h := cgo.NewHandle(p.Progress)
		defer h.Delete()
		C.ikl_set_progress(&params, C.uintptr_t(h))
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	m := C.ikl_llama_model_load_from_file(api, cpath, params)
	if m == nil {
		return nil, fmt.Errorf("libllama: llama.cpp %s cannot load model %s (not a GGUF file it supports, or the load was aborted)", lib.version, path)
	}
	vocab := C.ikl_llama_model_get_vocab(api, m)
	n := int(C.ikl_llama_vocab_n_tokens(api, vocab))
	if n <= 0 {
		C.ikl_llama_model_free(api, m)
		return nil, fmt.Errorf("libllama: model %s has no vocabulary", path)
	}
	return &Model{lib: lib, api: api, c: m, vocab: (*C.struct_llama_vocab)(unsafe.Pointer(vocab)), nVocab: n}, nil
}

// Close frees the model.
func (m *Model) Close() {
	if m.c != nil {
		C.ikl_llama_model_free(m.api, m.c)
		m.c = nil
	}
}

// Backend returns backend.LibLlama.
func (m *Model) Backend() string { return backend.LibLlama }

// Library is the library that loaded m.
func (m *Model) Library() *Library { return m.lib }

// VocabSize is the number of tokens in the vocabulary.
func (m *Model) VocabSize() int { return m.nVocab }

// TrainContext is the context length the model was trained with.
func (m *Model) TrainContext() int { return int(C.ikl_llama_model_n_ctx_train(m.api, m.c)) }

// EmbeddingSize is the width of the model's hidden state.
func (m *Model) EmbeddingSize() int { return int(C.ikl_llama_model_n_embd(m.api, m.c)) }

// ClassifierOutputs is the number of outputs of the model's classifier
// head (1 for a reranker).
func (m *Model) ClassifierOutputs() int { return int(C.ikl_llama_model_n_cls_out(m.api, m.c)) }

// Size is the number of bytes of the model's tensors.
func (m *Model) Size() uint64 { return uint64(C.ikl_llama_model_size(m.api, m.c)) }

// Params is the number of parameters.
func (m *Model) Params() uint64 { return uint64(C.ikl_llama_model_n_params(m.api, m.c)) }

// Meta returns the GGUF metadata value of key as a string.
func (m *Model) Meta(key string) (string, bool) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	buf := make([]byte, 256)
	for {
		n := C.ikl_llama_model_meta_val_str(m.api, m.c, ckey, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
		if n < 0 {
			return "", false
		}
		if int(n) < len(buf) {
			return string(buf[:n]), true
		}
		buf = make([]byte, int(n)+1)
	}
}

// ChatTemplate returns the model's default chat template, or "".
func (m *Model) ChatTemplate() string {
	t := C.ikl_llama_model_chat_template(m.api, m.c, nil)
	if t == nil {
		return ""
	}
	return C.GoString(t)
}

// Pooling is the pooling that the GGUF asks for (<arch>.pooling_type):
// PoolingNone for a generative model or a file that names none.
func (m *Model) Pooling() backend.Pooling {
	return backend.MetaPooling(m.Meta)
}

// HeadDims returns the width of the attention heads' keys and values:
// <arch>.attention.key_length and value_length, or the embedding width
// over the heads where the GGUF leaves them out; 0 without attention.
func (m *Model) HeadDims() (k, v int) {
	return backend.MetaHeadDims(m.Meta, m.EmbeddingSize(), m.heads())
}

// heads is the model's attention heads per layer.
func (m *Model) heads() int { return int(C.ikl_llama_model_n_head(m.api, m.c)) }

// layers is the model's layer count.
func (m *Model) layers() int { return int(C.ikl_llama_model_n_layer(m.api, m.c)) }

// SharesKV reports whether sequences may share a prompt prefix: not on a
// recurrent or hybrid model, whose state cannot be cut back.
func (m *Model) SharesKV() bool {
	return !bool(C.ikl_llama_model_is_recurrent(m.api, m.c)) && !bool(C.ikl_llama_model_is_hybrid(m.api, m.c))
}

// BOS is the beginning-of-sequence token, or -1.
func (m *Model) BOS() Token { return Token(C.ikl_llama_vocab_bos(m.api, m.vocab)) }

// EOS is the end-of-sequence token, or -1.
func (m *Model) EOS() Token { return Token(C.ikl_llama_vocab_eos(m.api, m.vocab)) }

// SEP is the separator token, or -1.
func (m *Model) SEP() Token { return Token(C.ikl_llama_vocab_sep(m.api, m.vocab)) }

// AddsBOS reports whether prompts start with BOS.
func (m *Model) AddsBOS() bool { return bool(C.ikl_llama_vocab_get_add_bos(m.api, m.vocab)) }

// AddsEOS reports whether tokenizing adds EOS after the text.
func (m *Model) AddsEOS() bool { return bool(C.ikl_llama_vocab_get_add_eos(m.api, m.vocab)) }

// AddsSEP reports whether the vocabulary puts SEP after a text.
func (m *Model) AddsSEP() bool { return bool(C.ikl_llama_vocab_get_add_sep(m.api, m.vocab)) }

func (m *Model) valid(t Token) bool { return t >= 0 && int(t) < m.nVocab }

// IsEOG reports whether t ends generation; false for a token outside the
// vocabulary.
func (m *Model) IsEOG(t Token) bool {
	return m.valid(t) && bool(C.ikl_llama_vocab_is_eog(m.api, m.vocab, C.llama_token(t)))
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

// IsControl reports whether t is a control token.
func (m *Model) IsControl(t Token) bool {
	return m.valid(t) && bool(C.ikl_llama_vocab_is_control(m.api, m.vocab, C.llama_token(t)))
}

// TokenText returns the vocabulary entry of t, as stored in the GGUF.
func (m *Model) TokenText(t Token) string {
	if !m.valid(t) {
		return ""
	}
	return C.GoString(C.ikl_llama_vocab_get_text(m.api, m.vocab, C.llama_token(t)))
}

// Piece returns the bytes that t stands for; control tokens give their
// text only when special is set.
func (m *Model) Piece(t Token, special bool) []byte {
	if !m.valid(t) {
		return nil
	}
	var stack [64]byte
	buf := stack[:]
	for range 3 {
		n := C.ikl_llama_token_to_piece(m.api, m.vocab, C.llama_token(t), (*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf)), 0, C.bool(special))
		if n >= 0 {
			return append([]byte(nil), buf[:min(int(n), len(buf))]...)
		}
		buf = make([]byte, int(-n))
	}
	return nil
}
