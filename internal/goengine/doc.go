//go:build cgo

// Package goengine runs models on Ollama's Go engine (the pinned
// github.com/ollama/ollama module's model, ml and kvcache packages) behind
// the engine's backend seam (internal/backend). It serves the
// architectures that the llama.cpp inside the same module does not know,
// such as qwen35 (Qwen3.5) and gemma4 (Gemma 4), on the same ggml kernels,
// in the same process.
//
// What it adds to Ollama's engine, to give the runner what llama.cpp gives
// it:
//   - load-time fixes for where the Go models differ from llama.cpp and
//     from the upstream converter's files: a sliding window one position
//     wider than llama.cpp's (Gemma 3, Gemma 4), and Qwen3.5's
//     multi-token-prediction layers, which the Go model would run as
//     ordinary layers;
//   - tokenizing as the llama.cpp backend does, where a request's text
//     stays text: the text of a control token in request data is not that
//     token (Ollama's tokenizer always matches it), special tokens are
//     matched the longest first, and pieces are llama.cpp's (tokenize.go
//     lists what Ollama's tokenizer still does differently);
//   - the end-of-generation tokens llama.cpp finds by their text;
//   - positions per sequence, batches whose tokens belong to several
//     sequences, and one forward pass per sequence where the model's memory
//     cannot mix sequences in one (Qwen3.5's recurrent layers);
//   - a sampler with llama.cpp's penalties and bans, under llama.cpp's
//     grammar engine.
//
// What it cannot do returns errors wrapping backend.ErrUnsupported that
// name it: saving a sequence's state (the prompt cache on disk), a
// quantized KV cache, partial prefix copies on recurrent models, images
// and encoder models (pooling).
//
// The Go engine's CPU thread count is one setting for the whole process:
// the last model loaded sets it.
package goengine
