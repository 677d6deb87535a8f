// Package inferencetest writes tiny GGUF language models, and vision
// projectors for them, for tests.
//
// The models are real: llama.cpp loads them, tokenizes with their vocabulary,
// renders their chat template and decodes batches with their weights. Only the
// weights are random (deterministic for a seed), so the models exercise
// everything but the meaning of the text: templates, tokenization, batching,
// prompt caching, grammars, stop strings, streaming and cancellation.
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
// a KV cache and a recurrent state; or "bert": a BERT reranker with a
// rank-pooling classifier head and a WordPiece vocabulary), the shape, the
// tensor type (F32, F16 or Q8_0) and the seed; [LoadTokenizer] takes a real byte-level BPE
// vocabulary and chat template from a Hugging Face tokenizer.json and
// tokenizer_config.json; [Qwen3_0_6B] gives the shape of a real model for
// benchmarks, whose speed does not depend on the weights' values.
//
// [Projector] writes a vision projector ("mmproj") for the default text
// model, so that a model reads images: LLaVA-style, Gemma 3's (for
// Options{Arch: "gemma3"}), whose image tokens attend to each other both
// ways, or Qwen2-VL's (for Options{Arch: "qwen2vl"}), whose image tokens
// form a grid that follows the picture's size and take 2-D positions.
// llama.cpp turns each picture (such as one from [PNG]) into 16 embeddings
// by default, or, for Qwen2-VL, the grid that
// [ProjectorOptions.ImageGrid] predicts.
//
// The package is pure Go and does not import the engine.
package inferencetest
