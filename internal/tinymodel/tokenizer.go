package tinymodel

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/inferkit/inferkit/internal/family"
)

// TokenType is a token's kind as GGUF stores it in tokenizer.ggml.token_type
// and llama.cpp reads it.
type TokenType int32

// Token types. Control tokens are matched in text only when the caller asks
// for special tokens to be parsed and are hidden when rendering special
// tokens is off; user-defined tokens are always matched whole and always
// rendered; unused tokens pad the vocabulary and never appear. Unknown and
// byte tokens belong to SentencePiece vocabularies: the byte tokens
// "<0x00>" to "<0xFF>" spell, one byte each, the text that no piece covers.
const (
	TokenNormal      TokenType = 1
	TokenUnknown     TokenType = 2
	TokenControl     TokenType = 3
	TokenUserDefined TokenType = 4
	TokenUnused      TokenType = 5
	TokenByte        TokenType = 6
)

// ChatML is the chat template of [ByteLevel]: each message as
// <|im_start|>role\ncontent<|im_end|>\n, and <|im_start|>assistant\n when a
// generation prompt is asked for; with tools, as Hermes-style models
// write them (<tools> in the system turn, calls as JSON in <tool_call>,
// results in <tool_response>). It is the engine's own ChatML, so that the
// engine recognises its tiny models as of the hermes family.
const ChatML = family.ChatML

// Qwen3Template is [ChatML] with Qwen3's thinking switch: the model opens
// its <think> section itself, and enable_thinking false makes the
// generation prompt close an empty one. With Options{Arch: "qwen3"} the
// engine recognises it as of the qwen3 family, which thinks and calls
// tools.
var Qwen3Template = strings.Replace(ChatML, `{{- '<|im_start|>assistant\n' -}}`,
	`{{- '<|im_start|>assistant\n' -}}{%- if enable_thinking is defined and enable_thinking is false -%}{{- '<think>\n\n</think>\n\n' -}}{%- endif -%}`, 1)

// Tokenizer is a vocabulary as llama.cpp reads it: a byte-level BPE
// (tokenizer.ggml.model "gpt2"), as in Qwen, Llama 3, DeepSeek V3 and
// gpt-oss, or a SentencePiece one ("llama", which llama.cpp calls SPM), as
// in Gemma and Llama 2. Make one with [ByteLevel] or [LoadTokenizer], and
// adjust its fields if needed. [WriteModel] only reads it, so one Tokenizer
// may be shared by concurrent writers.
type Tokenizer struct {
	// Model is the vocabulary's kind, tokenizer.ggml.model: "gpt2" (or "")
	// for a byte-level BPE, which splits text with the pre-tokenizer Pre
	// and merges by Merges; "llama" for SentencePiece, which merges the
	// pair of pieces whose merged token has the highest of Scores and
	// spells the rest with byte tokens, so it needs a token for each byte;
	// "gemma4" for Gemma 4's BPE over SentencePiece pieces, which merges
	// by Merges, writes a space as "▁" and spells the rest with byte
	// tokens, so it too needs a token for each byte (see
	// [Gemma4Tokenizer]). The pinned llama.cpp knows no "gemma4" vocabulary.
	Model string
	// Tokens are the tokens' texts, indexed by id. A byte-level BPE writes
	// them in the byte-level encoding of GPT-2 (a space is "Ġ"),
	// SentencePiece with "▁" for a space; added tokens are plain text. They
	// must be unique.
	Tokens []string
	// Types has one entry per token.
	Types []TokenType
	// Scores are SentencePiece's scores, one per token, or nil to give
	// token i the score -i. Byte-level BPE ignores them.
	Scores []float32
	// Merges are the BPE merges of a byte-level BPE, by priority, each
	// "left right".
	Merges []string
	// Pre names llama.cpp's pre-tokenizer of a byte-level BPE
	// (tokenizer.ggml.pre), such as "qwen2", "llama-bpe", "deepseek-v3",
	// "gpt-4o", "gpt-2" or "default". SentencePiece has none: "default".
	Pre string
	// BOS, EOS and PAD are token ids, or -1 for none (for SentencePiece,
	// llama.cpp then takes BOS 1 and EOS 2).
	BOS, EOS, PAD int
	// AddBOS says whether tokenizing adds BOS in front of the text.
	AddBOS bool
	// AddSpacePrefix, for SentencePiece, puts a space in front of the text
	// (tokenizer.ggml.add_space_prefix), so that its first word is spelled
	// like the others: Llama 2 does, Gemma does not.
	AddSpacePrefix bool
	// ChatTemplate is the Jinja chat template written to
	// tokenizer.chat_template unless [Options].ChatTemplate overrides it;
	// with neither, the model has no template.
	ChatTemplate string
}

// ByteLevel returns the vocabulary that needs no data: the 256 bytes as
// tokens 0 to 255 (token i is byte i, so any text round-trips, including
// UTF-8 characters split across tokens), no merges, then
//
//	256 <|endoftext|>  control, BOS and PAD
//	257 <|im_start|>   control
//	258 <|im_end|>     control, EOS
//	259 <think>        user-defined
//	260 </think>       user-defined
//	261 <tool_call>    user-defined
//	262 </tool_call>   user-defined
//
// with Qwen's pre-tokenizer, no BOS added, and the [ChatML] template. Each
// call returns a new Tokenizer.
func ByteLevel() *Tokenizer {
	tok := &Tokenizer{Model: "gpt2", Pre: "qwen2", BOS: 256, EOS: 258, PAD: 256, ChatTemplate: ChatML}
	for b := range 256 {
		tok.Tokens = append(tok.Tokens, string(byteRune(byte(b))))
		tok.Types = append(tok.Types, TokenNormal)
	}
	for _, s := range []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"} {
		tok.Tokens = append(tok.Tokens, s)
		tok.Types = append(tok.Types, TokenControl)
	}
	for _, s := range []string{"<think>", "</think>", "<tool_call>", "</tool_call>"} {
		tok.Tokens = append(tok.Tokens, s)
		tok.Types = append(tok.Types, TokenUserDefined)
	}
	return tok
}

// byteRune is GPT-2's byte-level encoding: printable bytes stand for
// themselves and the others, in order, for the code points from U+0100.
func byteRune(b byte) rune {
	printable := func(c byte) bool { return '!' <= c && c <= '~' || 0xa1 <= c && c <= 0xac || 0xae <= c }
	if printable(b) {
		return rune(b)
	}
	n := 0
	for c := range b {
		if !printable(byte(c)) {
			n++
		}
	}
	return rune(256 + n)
}

// LoadTokenizer reads a Hugging Face tokenizer.json and, unless
// tokenizerConfigJSON is "", its tokenizer_config.json; see [ParseTokenizer].
// Reading a vocabulary of 150,000 tokens takes about half a second: load it
// once per test binary and share the result.
func LoadTokenizer(tokenizerJSON, tokenizerConfigJSON string) (*Tokenizer, error) {
	tj, err := os.ReadFile(tokenizerJSON)
	if err != nil {
		return nil, fmt.Errorf("inferencetest: %w", err)
	}
	var cj []byte
	if tokenizerConfigJSON != "" {
		if cj, err = os.ReadFile(tokenizerConfigJSON); err != nil {
			return nil, fmt.Errorf("inferencetest: %w", err)
		}
	}
	return ParseTokenizer(tj, cj)
}

// ParseTokenizer makes a Tokenizer from the contents of a Hugging Face
// tokenizer.json and of its tokenizer_config.json, which may be nil. The
// model must be a BPE, of one of two kinds:
//
//   - Byte-level (Qwen, Llama 3, DeepSeek V3, gpt-oss, GPT-2 and most
//     recent models), read as llama.cpp's "gpt2" with its merges. The
//     pre-tokenizer is recognized from its regular expressions as
//     llama.cpp's converter names it: Qwen 2 and 3 give "qwen2", Llama 3
//     "llama-bpe", DeepSeek V3 "deepseek-v3", the o200k of GPT-4o and
//     gpt-oss "gpt-4o", plain GPT-2 "gpt-2"; others give "default": set
//     Pre to correct it.
//   - SentencePiece-style (Gemma, Llama 2, Mistral): its normalizer or
//     Metaspace pre-tokenizer turns spaces into "▁". It is read as
//     llama.cpp's "llama" (SPM), as the converter reads the model's
//     tokenizer.model: tokens "<0x00>" to "<0xFF>" are byte tokens when the
//     model has byte_fallback, its unk_token is the unknown token, and
//     AddSpacePrefix says whether "▁" is put in front of the text.
//     tokenizer.json has no scores, so token i scores -i, and added tokens
//     -1000 as the converter gives them: SentencePiece's BPE scores fall
//     with the id, so this ranks the pieces as the real tokenizer.model
//     does, but the values are not its values.
//
// Added tokens marked special, or that look like control tokens (<|...|>,
// <｜...｜>, <unused...>, <pad>, <mask>), become control tokens, and the
// other added tokens user-defined, with "▁" turned back into spaces, as
// llama.cpp's converter does; ids missing from the vocabulary are filled
// with unused "[PADn]" tokens. BOS, EOS, PAD, AddBOS and the chat template
// come from the config. Without a BOS token, a byte-level BPE takes
// <|endoftext|> or else EOS, since llama.cpp's own default for this
// vocabulary type is an ordinary token; SentencePiece leaves it to
// llama.cpp.
func ParseTokenizer(tokenizerJSON, tokenizerConfigJSON []byte) (*Tokenizer, error) {
	var tj struct {
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		Normalizer    json.RawMessage `json:"normalizer"`
		PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
		PostProcessor json.RawMessage `json:"post_processor"`
		Decoder       json.RawMessage `json:"decoder"`
		Model         struct {
			Type         string          `json:"type"`
			Vocab        map[string]int  `json:"vocab"`
			Merges       json.RawMessage `json:"merges"`
			ByteFallback bool            `json:"byte_fallback"`
			UnkToken     string          `json:"unk_token"`
		} `json:"model"`
	}
	if err := json.Unmarshal(tokenizerJSON, &tj); err != nil {
		return nil, fmt.Errorf("inferencetest: tokenizer.json: %w", err)
	}
	if tj.Model.Type != "BPE" {
		return nil, fmt.Errorf("inferencetest: tokenizer.json: model type %q, want BPE", tj.Model.Type)
	}
	tok := &Tokenizer{Model: "gpt2", BOS: -1, EOS: -1, PAD: -1}
	spm, prefix := sentencePiece(tj.Normalizer, tj.PreTokenizer)
	switch {
	case bytes.Contains(tj.PreTokenizer, []byte(`"ByteLevel"`)) || bytes.Contains(tj.Decoder, []byte(`"ByteLevel"`)):
	case spm:
		tok.Model, tok.AddSpacePrefix = "llama", prefix
	default:
		return nil, errors.New(`inferencetest: tokenizer.json: neither a byte-level BPE nor a SentencePiece-style one (spaces as "▁")`)
	}

	n := 0
	for _, id := range tj.Model.Vocab {
		n = max(n, id+1)
	}
	for _, a := range tj.AddedTokens {
		n = max(n, a.ID+1)
	}
	tok.Tokens, tok.Types = make([]string, n), make([]TokenType, n)
	if spm {
		tok.Scores = make([]float32, n)
	}
	for s, id := range tj.Model.Vocab {
		if id < 0 {
			return nil, fmt.Errorf("inferencetest: tokenizer.json: token %q has id %d", s, id)
		}
		tok.Tokens[id], tok.Types[id] = s, TokenNormal
		if spm {
			tok.Scores[id] = -float32(id)
			switch {
			case s == tj.Model.UnkToken && s != "":
				tok.Types[id] = TokenUnknown
			case tj.Model.ByteFallback && isByteToken(s):
				tok.Types[id] = TokenByte
			}
		}
	}
	for _, a := range tj.AddedTokens {
		if a.ID < 0 {
			return nil, fmt.Errorf("inferencetest: tokenizer.json: added token %q has id %d", a.Content, a.ID)
		}
		if a.Special || looksSpecial(a.Content) {
			tok.Tokens[a.ID], tok.Types[a.ID] = a.Content, TokenControl
		} else {
			// llama.cpp matches user-defined tokens in the text before
			// it turns spaces into "▁".
			tok.Tokens[a.ID], tok.Types[a.ID] = strings.ReplaceAll(a.Content, "▁", " "), TokenUserDefined
		}
		if spm {
			tok.Scores[a.ID] = -1000
		}
	}
	for id, t := range tok.Types {
		if t == 0 {
			tok.Tokens[id], tok.Types[id] = fmt.Sprintf("[PAD%d]", id), TokenUnused
			if spm {
				tok.Scores[id] = -1000
			}
		}
	}

	if spm {
		tok.Pre = "default"
	} else {
		if len(tj.Model.Merges) > 0 && string(tj.Model.Merges) != "null" {
			// Older files list merges as "a b", newer ones as ["a", "b"].
			if err := json.Unmarshal(tj.Model.Merges, &tok.Merges); err != nil {
				var pairs [][2]string
				if err := json.Unmarshal(tj.Model.Merges, &pairs); err != nil {
					return nil, fmt.Errorf("inferencetest: tokenizer.json: merges: %w", err)
				}
				tok.Merges = make([]string, len(pairs))
				for i, p := range pairs {
					tok.Merges[i] = p[0] + " " + p[1]
				}
			}
		}
		tok.Pre = preTokenizer(tj.PreTokenizer)
	}

	var cfg struct {
		AddBOS       *bool           `json:"add_bos_token"`
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
		PAD          json.RawMessage `json:"pad_token"`
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	if len(tokenizerConfigJSON) > 0 {
		if err := json.Unmarshal(tokenizerConfigJSON, &cfg); err != nil {
			return nil, fmt.Errorf("inferencetest: tokenizer_config.json: %w", err)
		}
	}
	ids := make(map[string]int, len(tok.Tokens))
	for id, s := range tok.Tokens {
		ids[s] = id
	}
	lookup := func(field string, raw json.RawMessage) (int, error) {
		s, err := tokenName(raw)
		if err != nil {
			return -1, fmt.Errorf("inferencetest: tokenizer_config.json: %s: %w", field, err)
		}
		if s == "" {
			return -1, nil
		}
		id, ok := ids[s]
		if !ok {
			return -1, fmt.Errorf("inferencetest: tokenizer_config.json: %s %q is not in the vocabulary", field, s)
		}
		return id, nil
	}
	var err error
	if tok.BOS, err = lookup("bos_token", cfg.BOS); err != nil {
		return nil, err
	}
	if tok.EOS, err = lookup("eos_token", cfg.EOS); err != nil {
		return nil, err
	}
	if tok.PAD, err = lookup("pad_token", cfg.PAD); err != nil {
		return nil, err
	}
	bosGiven := tok.BOS >= 0
	if !spm {
		eot, hasEOT := ids["<|endoftext|>"]
		if tok.EOS < 0 && hasEOT {
			tok.EOS = eot
		}
		if !bosGiven {
			if hasEOT {
				tok.BOS = eot
			} else {
				tok.BOS = tok.EOS
			}
		}
	}
	switch {
	case cfg.AddBOS != nil:
		tok.AddBOS = *cfg.AddBOS
	case bosGiven:
		// A template post-processor that names BOS adds it.
		tok.AddBOS = mentions(tj.PostProcessor, tok.Tokens[tok.BOS])
	}
	if tok.ChatTemplate, err = chatTemplate(cfg.ChatTemplate); err != nil {
		return nil, err
	}
	return tok, nil
}

// looksSpecial says whether an added token that is not marked special
// looks like a control token, as llama.cpp's converter judges it.
func looksSpecial(s string) bool {
	switch s {
	case "<pad>", "<mask>", "<2mass>", "[@BOS@]":
		return true
	}
	return strings.HasPrefix(s, "<|") && strings.HasSuffix(s, "|>") ||
		strings.HasPrefix(s, "<｜") && strings.HasSuffix(s, "｜>") ||
		strings.HasPrefix(s, "<unused") && strings.HasSuffix(s, ">")
}

// isByteToken says whether s is a SentencePiece byte token, <0x00> to
// <0xFF>.
func isByteToken(s string) bool {
	const hex = "0123456789ABCDEF"
	return len(s) == 6 && strings.HasPrefix(s, "<0x") && s[5] == '>' &&
		strings.IndexByte(hex, s[3]) >= 0 && strings.IndexByte(hex, s[4]) >= 0
}

// sentencePiece reports whether a tokenizer.json's normalizer or
// pre-tokenizer turns spaces into "▁", as SentencePiece does, and whether
// it also puts one in front of the text.
func sentencePiece(normalizer, preTokenizer json.RawMessage) (spm, prefix bool) {
	eachObject(normalizer, func(m map[string]any) {
		switch m["type"] {
		case "Replace":
			if p, ok := m["pattern"].(map[string]any); ok && p["String"] == " " && m["content"] == "▁" {
				spm = true
			}
		case "Prepend":
			prefix = prefix || m["prepend"] == "▁"
		}
	})
	eachObject(preTokenizer, func(m map[string]any) {
		if m["type"] != "Metaspace" || m["replacement"] != "▁" {
			return
		}
		spm = true
		switch m["prepend_scheme"] {
		case "first", "always":
			prefix = true
		case nil: // before prepend_scheme
			prefix = prefix || m["add_prefix_space"] != false
		}
	})
	return spm, spm && prefix
}

// eachObject calls f with every JSON object in raw, outer ones first and
// the elements of arrays in order.
func eachObject(raw json.RawMessage, f func(map[string]any)) {
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			f(v)
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var v any
	if len(raw) > 0 && json.Unmarshal(raw, &v) == nil {
		walk(v)
	}
}

// mentions says whether the JSON value raw holds the string s anywhere.
func mentions(raw json.RawMessage, s string) bool {
	var found bool
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			found = found || v == s
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var v any
	if json.Unmarshal(raw, &v) == nil {
		walk(v)
	}
	return found
}

// tokenName reads a special token of tokenizer_config.json: null, a string,
// or an object with its content.
func tokenName(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", err
	}
	return obj.Content, nil
}

// chatTemplate reads chat_template: a string, or a list of named templates
// of which it takes "default".
func chatTemplate(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", fmt.Errorf("inferencetest: tokenizer_config.json: chat_template: %w", err)
	}
	for _, t := range named {
		if t.Name == "default" {
			return t.Template, nil
		}
	}
	if len(named) > 0 {
		return named[0].Template, nil
	}
	return "", nil
}

// preTokenizers are the pre-tokenizers that llama.cpp implements, by the
// name its converter gives them, with the split expressions of their
// tokenizer.json in order.
var preTokenizers = []struct {
	name    string
	regexes []string
}{
	{"qwen2", []string{`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`}},
	{"llama-bpe", []string{`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`}},
	// Digits, then Chinese and Japanese, then words and punctuation; the
	// third matches literal carriage returns and line feeds.
	{"deepseek-v3", []string{
		`\p{N}{1,3}`,
		"[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
		"[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
	}},
	// OpenAI's o200k, of GPT-4o, gpt-oss and Llama 4.
	{"gpt-4o", []string{`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`}},
}

// preTokenizer names llama.cpp's pre-tokenizer for a tokenizer.json
// pre_tokenizer.
func preTokenizer(raw json.RawMessage) string {
	var regexes []string
	var byteLevelRegex bool
	eachObject(raw, func(m map[string]any) {
		if m["type"] == "Split" {
			if p, ok := m["pattern"].(map[string]any); ok {
				if r, ok := p["Regex"].(string); ok {
					regexes = append(regexes, r)
				}
			}
		}
		if m["type"] == "ByteLevel" && m["use_regex"] != false {
			byteLevelRegex = true
		}
	})
	for _, p := range preTokenizers {
		if slices.Equal(regexes, p.regexes) {
			return p.name
		}
	}
	if len(regexes) == 0 && byteLevelRegex {
		return "gpt-2"
	}
	return "default"
}

// metadata checks tok and returns its size padded with unused tokens to n
// (0 keeps its size) and its tokenizer.ggml.* metadata.
func (tok *Tokenizer) metadata(n int) (int, []kv, error) {
	model := cmp.Or(tok.Model, "gpt2")
	if model != "gpt2" && model != "llama" && model != "gemma4" {
		return 0, nil, fmt.Errorf("inferencetest: tokenizer model %q; want gpt2, llama or gemma4", tok.Model)
	}
	if len(tok.Types) != len(tok.Tokens) {
		return 0, nil, fmt.Errorf("inferencetest: tokenizer has %d tokens and %d types", len(tok.Tokens), len(tok.Types))
	}
	if model != "gpt2" && tok.Scores != nil && len(tok.Scores) != len(tok.Tokens) {
		return 0, nil, fmt.Errorf("inferencetest: tokenizer has %d tokens and %d scores", len(tok.Tokens), len(tok.Scores))
	}
	if len(tok.Tokens) == 0 {
		return 0, nil, errors.New("inferencetest: tokenizer has no tokens")
	}
	if n == 0 {
		n = len(tok.Tokens)
	}
	if n < len(tok.Tokens) {
		return 0, nil, fmt.Errorf("inferencetest: vocabulary size %d is below the tokenizer's %d tokens", n, len(tok.Tokens))
	}
	for name, id := range map[string]int{"BOS": tok.BOS, "EOS": tok.EOS, "PAD": tok.PAD} {
		if id < -1 || id >= len(tok.Tokens) {
			return 0, nil, fmt.Errorf("inferencetest: tokenizer %s id %d out of range", name, id)
		}
	}
	tokens := make([]string, n)
	types := make([]int32, n)
	seen := make(map[string]int, n)
	for id := range n {
		if id < len(tok.Tokens) {
			tokens[id], types[id] = tok.Tokens[id], int32(tok.Types[id])
		} else {
			tokens[id], types[id] = fmt.Sprintf("[PAD%d]", id), int32(TokenUnused)
		}
		if prev, dup := seen[tokens[id]]; dup {
			return 0, nil, fmt.Errorf("inferencetest: tokens %d and %d are both %q", prev, id, tokens[id])
		}
		seen[tokens[id]] = id
	}
	kvs := []kv{{"tokenizer.ggml.model", model}}
	if model != "gemma4" { // whose converter writes no pre-tokenizer
		kvs = append(kvs, kv{"tokenizer.ggml.pre", cmp.Or(tok.Pre, "default")})
	}
	kvs = append(kvs,
		kv{"tokenizer.ggml.tokens", tokens},
		kv{"tokenizer.ggml.token_type", types},
	)
	if model != "llama" {
		kvs = append(kvs, kv{"tokenizer.ggml.merges", tok.Merges})
	}
	if model != "gpt2" {
		// llama.cpp spells text that no piece covers with byte tokens, or
		// with one-byte tokens, and throws (aborting the process) when a
		// byte has neither.
		for b := range 256 {
			_, hex := seen[fmt.Sprintf("<0x%02X>", b)]
			if _, raw := seen[string([]byte{byte(b)})]; !hex && !raw {
				return 0, nil, fmt.Errorf("inferencetest: SentencePiece vocabulary has no token <0x%02X> for a byte that no piece covers", b)
			}
		}
		scores := make([]float32, n)
		for id := range scores {
			switch {
			case id >= len(tok.Tokens):
				scores[id] = -1000
			case tok.Scores != nil:
				scores[id] = tok.Scores[id]
			default:
				scores[id] = -float32(id)
			}
		}
		kvs = append(kvs,
			kv{"tokenizer.ggml.scores", scores},
			kv{"tokenizer.ggml.add_space_prefix", tok.AddSpacePrefix},
		)
	}
	kvs = append(kvs,
		kv{"tokenizer.ggml.add_bos_token", tok.AddBOS},
		kv{"tokenizer.ggml.add_eos_token", false},
	)
	for _, id := range []struct {
		key string
		id  int
	}{{"tokenizer.ggml.bos_token_id", tok.BOS}, {"tokenizer.ggml.eos_token_id", tok.EOS}, {"tokenizer.ggml.padding_token_id", tok.PAD}} {
		if id.id >= 0 {
			kvs = append(kvs, kv{id.key, uint32(id.id)})
		}
	}
	return n, kvs, nil
}
