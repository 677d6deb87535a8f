package inference

// RankRequest asks an encoder model (a reranker or classifier GGUF, whose
// pooling type is rank) for the relevance of each document to a query.
// Every (query, document) pair is one sequence, [CLS] query [SEP]
// document [SEP] for a BERT vocabulary, and the pairs are encoded together
// in as few batches as the batch size allows (one, when they fit). A pair
// never sees another pair: its score is the same whatever other documents
// come with it, up to float rounding.
type RankRequest struct {
	// Model is a model id or alias of an encoder model (ModelInfo.Encoder).
	Model string
	// Query is plain text (special-token text is not parsed).
	Query string
	// Documents are plain text: 1 to 256 of them.
	Documents []string
}

// RankResult holds the raw score of each document, in the order of the
// request: the classifier head's first output, unnormalised (a logit for
// most rerankers).
type RankResult struct {
	Scores []float64
	// Usage counts every token of every pair as a prompt token; nothing is
	// cached or generated.
	Usage Usage
}
