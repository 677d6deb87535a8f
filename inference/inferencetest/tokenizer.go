package inferencetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// TokenType is a token's kind as GGUF stores it in tokenizer.ggml.token_type
// and llama.cpp reads it.
type TokenType int32

// Token types. Control tokens are matched in text only when the caller asks
// for special tokens to be parsed and are hidden when rendering special
// tokens is off; user-defined tokens are always matched whole and always
// rendered; unused tokens pad the vocabulary and never appear.
const (
	TokenNormal      TokenType = 1
	TokenControl     TokenType = 3
	TokenUserDefined TokenType = 4
	TokenUnused      TokenType = 5
)

// ChatML is the chat template of [ByteLevel]: each message as
// <|im_start|>role\ncontent<|im_end|>\n, and <|im_start|>assistant\n when a
// generation prompt is asked for.
const ChatML = `{%- for message in messages -%}
{{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\n' -}}
{%- endif -%}`

// Tokenizer is a byte-level BPE vocabulary as llama.cpp reads it
// (tokenizer.ggml.model "gpt2"). Make one with [ByteLevel] or
// [LoadTokenizer], and adjust its fields if needed. [WriteModel] only reads
// it, so one Tokenizer may be shared by concurrent writers.
type Tokenizer struct {
	// Tokens are the tokens' texts, indexed by id, in the byte-level
	// encoding of GPT-2 (a space is "Ġ"), except added tokens, which are
	// plain text. They must be unique.
	Tokens []string
	// Types has one entry per token.
	Types []TokenType
	// Merges are the BPE merges, by priority, each "left right".
	Merges []string
	// Pre names llama.cpp's pre-tokenizer (tokenizer.ggml.pre), such as
	// "qwen2", "llama-bpe", "gpt-2" or "default".
	Pre string
	// BOS, EOS and PAD are token ids, or -1 for none.
	BOS, EOS, PAD int
	// AddBOS says whether tokenizing adds BOS in front of the text.
	AddBOS bool
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
	tok := &Tokenizer{Pre: "qwen2", BOS: 256, EOS: 258, PAD: 256, ChatTemplate: ChatML}
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
// tokenizer.json, whose model must be a byte-level BPE (Qwen, Llama 3,
// GPT-2 and most recent models), and of its tokenizer_config.json, which may
// be nil.
//
// Added tokens marked special, or that look like control tokens
// (<|...|>), become control tokens, and the other added tokens user-defined,
// as llama.cpp's converter does; ids missing from the vocabulary are filled
// with unused "[PADn]" tokens. The pre-tokenizer is recognized from its
// regular expression (Qwen 2/3 gives "qwen2", Llama 3 "llama-bpe", plain
// GPT-2 "gpt-2"), else it is "default": set Pre to correct it. BOS, EOS, PAD,
// AddBOS and the chat template come from the config; without a BOS token,
// <|endoftext|> or else EOS stands in, since llama.cpp's own default for
// this vocabulary type is an ordinary token.
func ParseTokenizer(tokenizerJSON, tokenizerConfigJSON []byte) (*Tokenizer, error) {
	var tj struct {
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
		PostProcessor json.RawMessage `json:"post_processor"`
		Decoder       json.RawMessage `json:"decoder"`
		Model         struct {
			Type   string          `json:"type"`
			Vocab  map[string]int  `json:"vocab"`
			Merges json.RawMessage `json:"merges"`
		} `json:"model"`
	}
	if err := json.Unmarshal(tokenizerJSON, &tj); err != nil {
		return nil, fmt.Errorf("inferencetest: tokenizer.json: %w", err)
	}
	if tj.Model.Type != "BPE" {
		return nil, fmt.Errorf("inferencetest: tokenizer.json: model type %q, want BPE", tj.Model.Type)
	}
	if !bytes.Contains(tj.PreTokenizer, []byte(`"ByteLevel"`)) && !bytes.Contains(tj.Decoder, []byte(`"ByteLevel"`)) {
		return nil, errors.New("inferencetest: tokenizer.json: not a byte-level BPE")
	}

	n := 0
	for _, id := range tj.Model.Vocab {
		n = max(n, id+1)
	}
	for _, a := range tj.AddedTokens {
		n = max(n, a.ID+1)
	}
	tok := &Tokenizer{Tokens: make([]string, n), Types: make([]TokenType, n), BOS: -1, EOS: -1, PAD: -1}
	for s, id := range tj.Model.Vocab {
		if id < 0 {
			return nil, fmt.Errorf("inferencetest: tokenizer.json: token %q has id %d", s, id)
		}
		tok.Tokens[id], tok.Types[id] = s, TokenNormal
	}
	for _, a := range tj.AddedTokens {
		if a.ID < 0 {
			return nil, fmt.Errorf("inferencetest: tokenizer.json: added token %q has id %d", a.Content, a.ID)
		}
		tok.Tokens[a.ID] = a.Content
		if a.Special || strings.HasPrefix(a.Content, "<|") && strings.HasSuffix(a.Content, "|>") {
			tok.Types[a.ID] = TokenControl
		} else {
			tok.Types[a.ID] = TokenUserDefined
		}
	}
	for id, t := range tok.Types {
		if t == 0 {
			tok.Tokens[id], tok.Types[id] = fmt.Sprintf("[PAD%d]", id), TokenUnused
		}
	}

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
	eot, hasEOT := ids["<|endoftext|>"]
	if tok.EOS < 0 && hasEOT {
		tok.EOS = eot
	}
	bosGiven := tok.BOS >= 0
	if !bosGiven {
		if hasEOT {
			tok.BOS = eot
		} else {
			tok.BOS = tok.EOS
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

// Pre-tokenizer split expressions that llama.cpp implements.
const (
	regexQwen2  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	regexLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// preTokenizer names llama.cpp's pre-tokenizer for a tokenizer.json
// pre_tokenizer.
func preTokenizer(raw json.RawMessage) string {
	var regexes []string
	var byteLevelRegex bool
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "Split" {
				if p, ok := v["pattern"].(map[string]any); ok {
					if r, ok := p["Regex"].(string); ok {
						regexes = append(regexes, r)
					}
				}
			}
			if v["type"] == "ByteLevel" && v["use_regex"] != false {
				byteLevelRegex = true
			}
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
	switch {
	case len(regexes) == 1 && regexes[0] == regexQwen2:
		return "qwen2"
	case len(regexes) == 1 && regexes[0] == regexLlama3:
		return "llama-bpe"
	case len(regexes) == 0 && byteLevelRegex:
		return "gpt-2"
	}
	return "default"
}

// vocabulary checks tok and returns its tokens and types padded with unused
// tokens to size n (0 keeps its size).
func (tok *Tokenizer) vocabulary(n int) ([]string, []int32, error) {
	if len(tok.Types) != len(tok.Tokens) {
		return nil, nil, fmt.Errorf("inferencetest: tokenizer has %d tokens and %d types", len(tok.Tokens), len(tok.Types))
	}
	if len(tok.Tokens) == 0 {
		return nil, nil, errors.New("inferencetest: tokenizer has no tokens")
	}
	if n == 0 {
		n = len(tok.Tokens)
	}
	if n < len(tok.Tokens) {
		return nil, nil, fmt.Errorf("inferencetest: vocabulary size %d is below the tokenizer's %d tokens", n, len(tok.Tokens))
	}
	for name, id := range map[string]int{"BOS": tok.BOS, "EOS": tok.EOS, "PAD": tok.PAD} {
		if id < -1 || id >= len(tok.Tokens) {
			return nil, nil, fmt.Errorf("inferencetest: tokenizer %s id %d out of range", name, id)
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
			return nil, nil, fmt.Errorf("inferencetest: tokens %d and %d are both %q", prev, id, tokens[id])
		}
		seen[tokens[id]] = id
	}
	return tokens, types, nil
}
