package inference

import "time"

// ModelInfo describes a loaded model.
type ModelInfo struct {
	// ID and Aliases are the names of the catalog entry.
	ID      string
	Aliases []string
	// Path is the GGUF file.
	Path string
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
	// Encoder says the model is an encoder whose GGUF asks for rank
	// pooling (a reranker or classifier): Engine.Rank serves it, and
	// generation and Score fail on it with ErrInvalidRequest.
	Encoder bool
	// Images says the model reads images: it was loaded with a projector
	// (catalog.Model.Projector), and ScoreRequest.Images work on it.
	Images bool
	// LoadTime is how long New took to load the model's file and make
	// its context, the projector aside. Entries that share one file
	// report the same time.
	LoadTime time.Duration
}
