package inference

import "math"

// Bounds of one EmbedRequest.
const (
	// MaxEmbedInputs is the most inputs one EmbedRequest may hold (as
	// OpenAI's embeddings endpoint).
	MaxEmbedInputs = 2048
	// MaxEmbedTokens is the most tokens all the inputs of one EmbedRequest
	// may hold together, special tokens included (as OpenAI's embeddings
	// endpoint).
	MaxEmbedTokens = 300_000
)

// EmbedRequest asks an embedding model (a GGUF whose pooling type is
// mean, cls or last: BERT and nomic-bert style encoders, and decoder
// embedding models such as Qwen3-Embedding) for one vector per input.
// Each input is one sequence, wrapped in the special tokens the model's
// vocabulary adds to a text (BERT's [CLS] and [SEP], or BOS and EOS where
// the GGUF asks for them); the inputs are encoded together in as few
// batches as the batch size allows (one, when they fit). An input never
// sees another input: its vector is the same whatever other inputs come
// with it, up to float rounding.
//
// Set exactly one of Input and Tokens.
type EmbedRequest struct {
	// Model is a model id or alias of an embedding model
	// (ModelInfo.Embedding).
	Model string
	// Input are texts: 1 to MaxEmbedInputs of them, none empty. They are
	// plain text: special-token text in them is not parsed.
	Input []string
	// Tokens are inputs already tokenized, as ids of the model's
	// vocabulary: 1 to MaxEmbedInputs of them, none empty. An input of
	// tokens stands for a text: the model's special tokens wrap it as
	// they wrap a text, so that the tokens of a text (Engine.Tokenize)
	// give the text's vector.
	Tokens [][]int
	// Dimensions, when positive, truncates every vector to its first
	// Dimensions values and normalises it again, which only a model
	// trained for it (Matryoshka representation learning) makes
	// meaningful: the engine accepts 1 to ModelInfo.Dimensions, and the
	// catalog says which models may (catalog.Model.MinDimensions). 0
	// means the model's full size.
	Dimensions int
}

// EmbedResult holds one vector per input, in the order of the request,
// each of unit length (L2-normalised): a cosine similarity is then a dot
// product, as OpenAI's embeddings are.
type EmbedResult struct {
	Embeddings [][]float32
	// Usage counts every token of every input, special tokens included,
	// as a prompt token; nothing is cached or generated.
	Usage Usage
}

// PreparedEmbed is an EmbedRequest that Engine.PrepareEmbed has checked
// and tokenized, for Engine.RunEmbed: admission control reads its count
// before any encoding. It holds no resources; run it at most once. Its
// zero value is not usable.
type PreparedEmbed struct {
	// Request is the request, as given to PrepareEmbed.
	Request EmbedRequest
	// InputTokens is the number of tokens of all the inputs, special
	// tokens included: what RunEmbed's Usage will report.
	InputTokens int

	plan *embedPlan
}

// normalize scales v to unit length in place. A zero vector stays zero;
// it reports false for a vector with a NaN or an infinity.
func normalize(v []float32) bool {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		return false
	}
	if sum == 0 {
		return true
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return true
}
