package inference

import "time"

// ModelInfo describes a loaded model.
type ModelInfo struct {
	// ID and Aliases are the names of the catalog entry.
	ID      string
	Aliases []string
	// Path is the GGUF file.
	Path string
	// Backend is the library that runs the model: "llama.cpp",
	// "libllama" (the llama.cpp library of Config.Library), or "ollama"
	// (Ollama's Go engine) for architectures the llama.cpp build does not
	// know (see Config.Backend); RemoteBackend for a model that an
	// upstream runs (catalog.Model.Remote).
	Backend string
	// Architecture is the GGUF's general.architecture, such as "llama".
	Architecture string
	// ContextLength is the most tokens (prompt and output) one request may
	// use: the configured context, never more than the model was trained
	// for.
	ContextLength int
	// TrainContext is the context the model was trained with.
	TrainContext int
	// Params is the number of parameters; Size the bytes of the weights.
	Params uint64
	Size   uint64
	// ChatTemplate is the model's Jinja chat template ("" when it has
	// none, and the engine uses ChatML).
	ChatTemplate string
	// Family is the model family that the engine recognised from the
	// architecture and chat template, such as "qwen3", "llama3" or
	// "hermes" (inferkit's own ChatML, for a model without a template);
	// "" when none recognises it (and for encoders): the model then
	// chats in plain text, and requests that offer tools or ask for a
	// thinking budget fail with a FieldError naming the field.
	Family string
	// Encoder says the model is an encoder whose GGUF asks for rank
	// pooling (a reranker or classifier): Engine.Rank serves it, and
	// generation and Score fail on it with ErrInvalidRequest.
	Encoder bool
	// Embedding says the model is an embedding model: its GGUF asks for
	// mean, cls or last pooling (a BERT-style encoder, or a decoder
	// embedding model such as Qwen3-Embedding). Engine.Embed serves it;
	// generation, Score and Rank fail on it with ErrInvalidRequest.
	Embedding bool
	// Pooling is how an encoder or embedding model pools its tokens'
	// states into one output per input, as its GGUF says: "mean", "cls",
	// "last" or "rank"; "" for a generative model.
	Pooling string
	// Dimensions is the length of an embedding model's vectors (its
	// hidden size); 0 for other models.
	Dimensions int
	// Images says the model reads images: it was loaded with a projector
	// (catalog.Model.Projector), and image parts of a Request's messages
	// (Part.Image) and ScoreRequest.Images work on it.
	Images bool
	// WebSearch says requests may search the web on the model
	// (Request.Search): it generates, and the engine has Config.Search.
	WebSearch bool
	// Loaded says the model's weights are in memory now: Config.KeepAlive
	// and Engine.Unload unload an idle model, and a request or
	// Engine.Load loads it again.
	Loaded bool
	// LoadTime is how long New took to load the model's file and make
	// its context, the projector aside. Entries that share one file
	// report the same time.
	LoadTime time.Duration
}
