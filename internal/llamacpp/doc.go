// Package llamacpp is inferkit's narrow backend over llama.cpp: load a GGUF
// model, tokenize, create a context with a unified KV cache, decode batches,
// read logits, manage KV sequences and sample.
//
// It is the only package of the module that uses cgo. It links llama.cpp
// through github.com/ollama/ollama/llama and calls the C API of the same
// pinned sources directly where that package stops short (unified KV cache,
// GGUF metadata, the sampler chain). No C type leaves this package.
//
// Every input that reaches C is checked first: a crash inside llama.cpp ends
// the host process. Grammars and JSON Schemas are checked by the pure-Go
// package internal/grammar, which NewGrammar and SchemaGrammar call before
// C. A Context is not safe for concurrent use; the engine gives each one a
// single owning goroutine. A Model is safe for concurrent use once loaded.
package llamacpp
