// Package inference runs GGUF language models in-process, through
// llama.cpp or through Ollama's Go engine (Config.Backend) for
// architectures newer than the pinned llama.cpp.
//
// An Engine loads the models of its Config and serves Requests: a
// conversation rendered with the model's own chat template (Jinja, as in
// Hugging Face's apply_chat_template; ChatML when the model has none), or a
// raw prompt. Generate returns the whole Result; Stream yields Events as the
// tokens come, as an iter.Seq2 whose early break frees the request's
// sequence at once.
//
// Each model decodes a fixed number of sequences together (continuous
// batching): every decode step takes the next token of each generating
// sequence and chunks of the prompts waiting to start, on a unified KV cache
// where sequences can share cells. Sequences keep the tokens of their last
// request, so a prompt that starts like an earlier one (a system prompt, an
// earlier turn) is not decoded again; Usage.CachedTokens counts what was
// reused.
//
// Prepare checks a request, renders and tokenizes its prompt once, and
// reports what it will cost (prompt tokens, the most output tokens) before
// any decoding, for admission control; Run decodes a Prepared request.
// Stream is the two together. Score and Embed have the same split
// (PrepareScore, PrepareEmbed).
//
// A model loaded with a projector (catalog.Model.Projector) reads images:
// the image parts of messages and ScoreRequest.Images. A request that
// enables Request.Search runs web searches through Config.Search as tool
// calls of the model's family. A model with no request at work for
// Config.KeepAlive is unloaded, and loaded again by the next request that
// needs it; Config.CacheDir keeps prompt prefixes on disk across restarts.
//
// Encoder GGUFs have no runner: a reranker's (rank pooling) serves Rank,
// and an embedding model's (mean, cls or last pooling: BERT and nomic-bert
// style encoders, decoder embedding models such as Qwen3-Embedding) serves
// Embed, which returns one L2-normalised vector per input. Both put each
// input on a sequence of its own and encode up to 64 in one batch.
//
// A catalog entry with Remote runs on an inference cluster instead of a
// file: replicas of vLLM, SGLang, llama.cpp's server, Ollama or another
// inferkit behind the OpenAI-compatible chat API. Prepare checks it as
// any request (refusing by name what that API cannot carry: grammars,
// thinking budgets, several choices, prompt log-probabilities, images,
// raw prompts) and counts its prompt on a stated estimate; Run streams
// it from the least loaded healthy replica, keeping requests that share
// a prompt prefix on one replica, retrying where nothing was streamed
// yet; the result's usage is the upstream's. Web search and MCP turns
// run here, between upstream calls. Failures wrap ErrUpstream or
// ErrUnavailable in an *UpstreamError. A remote model neither tokenizes
// nor scores branches: package decision asks it one-token questions.
//
// Text from a request is data. Messages and tools are rendered so that only
// the template's own markup becomes special tokens: a user writing
// <|im_end|> gets text, not the end of its turn (see Literal). Tokenizing
// is safe for any text (llama.cpp's own tokenizer overflows its stack on
// long runs of one character class and is quadratic in special-token
// matches), and stops once a prompt passes the context.
//
// The package holds the public vocabulary and policy: requests and their
// validation, chat templates, web-search turns, summaries, and residency
// (which model is loaded, for whom, until when: residency.go). The decode
// machinery (slots, batching, KV cells, the prompt cache, scoring
// branches) is internal/runner's; events.go turns its events and errors
// into Events and Results.
//
// The backends need cgo; the rest of the package does not. One file, the
// loader (loader.go), imports them; built without cgo, the whole engine
// builds and a model fails to load with an error that says why.
package inference
