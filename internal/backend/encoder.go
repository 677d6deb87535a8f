package backend

// Encoder is a context of an encoder model (a GGUF that asks for
// pooling: a reranker or classifier, or an embedding model). Each Encode
// stands alone, and pools each sequence's outputs. It is not safe for
// concurrent use; its owner must call Close.
type Encoder interface {
	// BatchSize is the most tokens one Encode takes.
	BatchSize() int
	// NewBatch makes a batch of up to n tokens for this encoder; its
	// caller closes it.
	NewBatch(n int) Batch
	// Encode runs the model over b, every token of which belongs to one
	// sequence only, at positions from 0. It sets the batch's output
	// flags itself.
	Encode(b Batch) error
	// SequenceScores returns the classifier outputs of seq after Encode
	// with PoolingRank; SequenceEmbedding its pooled embedding with the
	// other poolings. Both return nil when seq was not in the last batch,
	// and a copy otherwise.
	SequenceScores(seq int) []float32
	SequenceEmbedding(seq int) []float32
	Close()
}

// EncoderModel is a Model that runs encoders. A backend that runs none
// fails NewEncoder with an error wrapping ErrUnsupported.
type EncoderModel interface {
	// NewEncoder makes an encoder over the model, pooled as p.Pooling;
	// its caller closes it.
	NewEncoder(p ContextParams) (Encoder, error)
	// Specials returns the tokens that the vocabulary puts around a
	// text: BOS (BERT's [CLS]) where it adds it, then EOS and SEP where
	// it adds them.
	Specials() (open, closing []Token)
}
