package inferencetest

import (
	"testing"

	"github.com/inferkit/inferkit/internal/tinymodel"
)

// This file re-exports internal/tinymodel, where the writer lives, under
// the names users know. Each name keeps its documentation here, where
// users read it; the fields and methods of the aliased types are
// documented with the types in internal/tinymodel (go doc
// ./internal/tinymodel Options).

// Options describe a model to write. The zero value gives a two-layer llama
// of 64 dimensions with the [ByteLevel] vocabulary and the [ChatML] template,
// in F32 with the weights of seed 0.
type Options = tinymodel.Options

// ProjectorOptions describe a vision projector to write. The zero value gives
// a LLaVA-style projector for the default text model of [Options] (64
// dimensions): a CLIP vision tower of 32 dimensions, 2 heads and 2 blocks
// over 32×32 images cut into 8×8 patches, so that every image becomes 16
// embeddings of 64 dimensions, in F32 with the weights of seed 0. Its
// method ImageGrid returns the grid of embeddings that llama.cpp's mtmd
// makes of a picture of a given size.
type ProjectorOptions = tinymodel.ProjectorOptions

// Tokenizer is a vocabulary as llama.cpp reads it: a byte-level BPE
// (tokenizer.ggml.model "gpt2"), as in Qwen, Llama 3, DeepSeek V3 and
// gpt-oss, or a SentencePiece one ("llama", which llama.cpp calls SPM), as
// in Gemma and Llama 2. Make one with [ByteLevel] or [LoadTokenizer], and
// adjust its fields if needed. [WriteModel] only reads it, so one Tokenizer
// may be shared by concurrent writers.
type Tokenizer = tinymodel.Tokenizer

// TokenType is a token's kind as GGUF stores it in tokenizer.ggml.token_type
// and llama.cpp reads it.
type TokenType = tinymodel.TokenType

// Token types. Control tokens are matched in text only when the caller asks
// for special tokens to be parsed and are hidden when rendering special
// tokens is off; user-defined tokens are always matched whole and always
// rendered; unused tokens pad the vocabulary and never appear. Unknown and
// byte tokens belong to SentencePiece vocabularies: the byte tokens
// "<0x00>" to "<0xFF>" spell, one byte each, the text that no piece covers.
const (
	TokenNormal      TokenType = tinymodel.TokenNormal
	TokenUnknown     TokenType = tinymodel.TokenUnknown
	TokenControl     TokenType = tinymodel.TokenControl
	TokenUserDefined TokenType = tinymodel.TokenUserDefined
	TokenUnused      TokenType = tinymodel.TokenUnused
	TokenByte        TokenType = tinymodel.TokenByte
)

// ChatML is the chat template of [ByteLevel]: each message as
// <|im_start|>role\ncontent<|im_end|>\n, and <|im_start|>assistant\n when a
// generation prompt is asked for; with tools, as Hermes-style models
// write them (<tools> in the system turn, calls as JSON in <tool_call>,
// results in <tool_response>). It is the engine's own ChatML, so that the
// engine recognises its tiny models as of the hermes family.
const ChatML = tinymodel.ChatML

// Qwen3Template is [ChatML] with Qwen3's thinking switch: the model opens
// its <think> section itself, and enable_thinking false makes the
// generation prompt close an empty one. With Options{Arch: "qwen3"} the
// engine recognises it as of the qwen3 family, which thinks and calls
// tools.
var Qwen3Template = tinymodel.Qwen3Template

// Qwen35Template is the chat template of Options{Arch: "qwen35"} with the
// default vocabulary: [ChatML], whose generation prompt opens the
// assistant's thinking as Qwen3.5's template does, with
// <|im_start|>assistant\n<think>\n, or, when enable_thinking is false,
// closes it at once with <|im_start|>assistant\n<think>\n\n</think>\n\n.
const Qwen35Template = tinymodel.Qwen35Template

// Gemma4Template is the chat template of [Gemma4Tokenizer], the turns of
// Gemma 4's template without its tools: <bos>, then a system turn
// <|turn>system\n...<turn|>\n when the first message is a system (or
// developer) message or enable_thinking is true, in which case it starts
// with <|think|>\n, then each message as <|turn>role\ncontent<turn|>\n with
// the assistant's role named model, and <|turn>model\n when a generation
// prompt is asked for.
const Gemma4Template = tinymodel.Gemma4Template

// Model writes the model that opts describe into a temporary directory of t,
// removed when the test ends, and returns its path. It stops the test with
// t.Fatal if writing fails.
func Model(t testing.TB, opts Options) string {
	t.Helper()
	return tinymodel.Model(t, opts)
}

// WriteModel writes the model that opts describe to path as a GGUF file. It
// writes a temporary file beside path and renames it, so path never holds a
// partial model. Large models are streamed: memory use stays at a few
// megabytes plus the vocabulary whatever the model's size. WriteModel may be
// called concurrently, with distinct paths.
func WriteModel(path string, opts Options) error {
	return tinymodel.WriteModel(path, opts)
}

// Projector writes the projector that opts describe into a temporary
// directory of t, removed when the test ends, and returns its path. It stops
// the test with t.Fatal if writing fails.
func Projector(t testing.TB, opts ProjectorOptions) string {
	t.Helper()
	return tinymodel.Projector(t, opts)
}

// WriteProjector writes the vision projector that opts describe to path as
// a GGUF file that llama.cpp's multimodal library (mtmd) loads beside a text
// model, of the Type that opts names (a LLaVA-1.5, Gemma 3 or Qwen2-VL
// projector), all in F32. Its TextEmbd must equal the text model's Embd. Like
// [WriteModel], it writes a temporary file beside path and renames it, and
// may be called concurrently with distinct paths.
func WriteProjector(path string, opts ProjectorOptions) error {
	return tinymodel.WriteProjector(path, opts)
}

// PNG returns a width×height PNG picture of seeded noise over a gradient:
// the same arguments give the same bytes, other seeds other pictures. It
// is input for a model loaded with a [Projector]. It panics if a side is
// not positive.
func PNG(width, height int, seed int64) []byte {
	return tinymodel.PNG(width, height, seed)
}

// Qwen3_0_6B returns the shape of Qwen3-0.6B in Q8_0: 28 layers, 1024
// dimensions, 16 query and 8 key-value heads of 128, a feed-forward width of
// 3072, tied embeddings and a vocabulary padded to 151,936 tokens. Random
// weights make it useless for text and faithful for speed and memory; the
// file is about 640 MB and takes a few seconds to write. With the default
// [ByteLevel] vocabulary most of the padded vocabulary is unused tokens,
// which the random weights sample as often as any and which render as
// nothing: set Tokenizer to the real Qwen3 vocabulary (see [LoadTokenizer])
// to get its tokenization, text and chat template too.
func Qwen3_0_6B() Options {
	return tinymodel.Qwen3_0_6B()
}

// Qwen35_0_8B returns the shape of Qwen3.5-0.8B's language model in Q8_0,
// as its config.json gives it: 24 layers of 1024 dimensions, every fourth
// (3, 7, ..., 23) attending with 8 query and 2 key-value heads of 256,
// the others gated delta nets with 16 key and 16 value heads of 128, a
// feed-forward width of 3584, tied embeddings, a vocabulary padded to
// 248,320 tokens and a context of 262,144; its vision encoder and
// multi-token-prediction layer are left out (NextN: 1 adds the latter). Random weights make it
// useless for text and faithful for speed and memory; the file is about
// 810 MB and takes a few seconds to write. Only Ollama's Go engine loads
// it: the pinned llama.cpp does not know qwen35. With the default [ByteLevel]
// vocabulary nearly all of the 248,320 tokens are unused: set Tokenizer to
// a real vocabulary (see [LoadTokenizer]), padded up to 248,320, for real
// tokenization.
func Qwen35_0_8B() Options {
	return tinymodel.Qwen35_0_8B()
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
	return tinymodel.ByteLevel()
}

// Gemma4Tokenizer returns the vocabulary that Options{Arch: "gemma4"}
// defaults to, laid out as Gemma 4's as far as a small vocabulary allows: a
// BPE over SentencePiece pieces (tokenizer.ggml.model "gemma4"), in which
// a space is "▁" and text that no piece covers is spelled with the byte
// tokens "<0x00>" to "<0xFF>". It holds
//
//	0 <pad>  1 <eos> (EOS)  2 <bos> (BOS, added)  3 <unk>  4 <mask>
//	5 <|think|>  6 <|tool>  7 <tool|>  (control)
//	8 <|channel>  9 <channel|>  10 <|tool_call>  11 <tool_call|>
//	12 <|tool_response>  13 <tool_response|>  14 <|"|>  (user-defined, as
//	llama.cpp's converter marks them so that they are always rendered)
//	15 to 104 <unused0> to <unused89>
//	105 <|turn>  106 <turn|>  (control; Gemma 4's turn markers, 106 being
//	the end of turn that Ollama's engine assumes)
//	107 to 362 the byte tokens
//	363 ▁, then the printable ASCII characters, then ▁▁, th, ▁th and er
//	with their merges
//
// and the [Gemma4Template] chat template. Each call returns a new
// Tokenizer.
func Gemma4Tokenizer() *Tokenizer {
	return tinymodel.Gemma4Tokenizer()
}

// LoadTokenizer reads a Hugging Face tokenizer.json and, unless
// tokenizerConfigJSON is "", its tokenizer_config.json; see [ParseTokenizer].
// Reading a vocabulary of 150,000 tokens takes about half a second: load it
// once per test binary and share the result.
func LoadTokenizer(tokenizerJSON, tokenizerConfigJSON string) (*Tokenizer, error) {
	return tinymodel.LoadTokenizer(tokenizerJSON, tokenizerConfigJSON)
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
	return tinymodel.ParseTokenizer(tokenizerJSON, tokenizerConfigJSON)
}
