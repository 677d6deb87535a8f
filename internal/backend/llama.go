package backend

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
)

// What the two backends that bind llama.cpp's C API (internal/llamacpp,
// compiled in, and internal/libllama, loaded at run time) make alike of
// what that API returns. The numbers are llama.h's, the same in both
// releases.

// llama.cpp's enum llama_vocab_type and enum llama_token_attr.
const (
	llamaVocabSPM = 1
	llamaVocabBPE = 2

	llamaAttrUnknown     = 1 << 0
	llamaAttrControl     = 1 << 3
	llamaAttrUserDefined = 1 << 4
	llamaAttrLStrip      = 1 << 7
	llamaAttrRStrip      = 1 << 8
)

// LlamaVocab is what Tokenizing needs of a llama.cpp vocabulary of n
// tokens of type kind (llama_vocab_type): its special tokens, read from
// each token's attributes (llama_vocab_get_attr) and text, and its chunk
// size; firstPiece, called for an SPM vocabulary only, returns the piece
// of the first token of "a" (nil when there is none), whose leading space
// says the tokenizer adds one.
func LlamaVocab(n int, kind int32, attr func(Token) int32, text func(Token) string, firstPiece func() []byte) Vocab {
	var v Vocab
	for t := range Token(n) {
		a := attr(t)
		if a&(llamaAttrControl|llamaAttrUserDefined|llamaAttrUnknown) == 0 {
			continue
		}
		k := UserDefined
		switch {
		case a&llamaAttrUnknown != 0:
			k = Unknown
		case a&llamaAttrControl != 0:
			k = Control
		}
		v.Specials.Add(text(t), Special{ID: t, Kind: k, LStrip: a&llamaAttrLStrip != 0, RStrip: a&llamaAttrRStrip != 0})
	}
	switch kind {
	case llamaVocabBPE:
		v.Chunk = BPEChunk
	case llamaVocabSPM:
		v.Chunk, v.SPM = SPMChunk, true
		p := firstPiece()
		v.SpacePrefix = len(p) > 0 && p[0] == ' '
	}
	return v
}

// MetaPooling is the pooling that a GGUF's metadata asks for
// (<arch>.pooling_type), read through meta: PoolingNone for a generative
// model or a file that names none or another.
func MetaPooling(meta func(key string) (string, bool)) Pooling {
	arch, _ := meta("general.architecture")
	v, ok := meta(arch + ".pooling_type")
	if !ok {
		return PoolingNone
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < int(PoolingNone) || n > int(PoolingRank) {
		return PoolingNone
	}
	return Pooling(n)
}

// MetaHeadDims returns the width of a model's attention heads' keys and
// values: <arch>.attention.key_length and value_length, read through
// meta, or embd over heads where the GGUF leaves them out, as llama.cpp
// reads them; 0 for a model without attention heads.
func MetaHeadDims(meta func(key string) (string, bool), embd, heads int) (k, v int) {
	if heads <= 0 {
		return 0, 0
	}
	k = embd / heads
	v = k
	if arch, ok := meta("general.architecture"); ok {
		if s, ok := meta(arch + ".attention.key_length"); ok {
			k, _ = strconv.Atoi(s)
		}
		if s, ok := meta(arch + ".attention.value_length"); ok {
			v, _ = strconv.Atoi(s)
		}
	}
	return k, v
}

// LlamaSpecials returns the tokens that a llama.cpp vocabulary puts around
// a text (EncoderModel.Specials): BOS where it adds it, then EOS and SEP
// where it adds them; a token of -1 is none.
func LlamaSpecials(bos, eos, sep Token, addBOS, addEOS, addSEP bool) (open, closing []Token) {
	if addBOS && bos >= 0 {
		open = append(open, bos)
	}
	if addEOS && eos >= 0 {
		closing = append(closing, eos)
	}
	if addSEP && sep >= 0 {
		closing = append(closing, sep)
	}
	return open, closing
}

// LlamaLog logs a line of llama.cpp's log (ggml_log_level level) to
// slog.Default with the attribute source: its ERROR at Warn, its INFO
// and WARN at Debug, the rest below Debug. The engine reports failures as
// Go errors, so the host's log stays quiet unless it asks for detail.
func LlamaLog(level int, text, source string) {
	var l slog.Level
	switch level {
	case 4: // GGML_LOG_LEVEL_ERROR
		l = slog.LevelWarn
	case 2, 3: // INFO, WARN
		l = slog.LevelDebug
	default:
		l = slog.LevelDebug - 4
	}
	logger := slog.Default()
	if !logger.Enabled(context.Background(), l) {
		return
	}
	if msg := strings.TrimSpace(text); msg != "" {
		logger.Log(context.Background(), l, msg, "source", source)
	}
}
