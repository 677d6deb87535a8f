package inference

// ModelStats is a snapshot of one model's load, from Engine.Stats: what a
// metrics scrape reads. It is a plain value; the engine keeps no history.
type ModelStats struct {
	// ID is the catalog entry's id, as in ModelInfo. Entries that share
	// one model file share its sequences and queue, and report the same
	// numbers.
	ID string
	// Queued is the number of requests waiting for a free sequence.
	Queued int
	// Active is the number of sequences serving a request: prefilling or
	// generating.
	Active int
	// Sequences is the number of sequences the model decodes at once
	// (Config.Parallel); 0 for an encoder model, which has no queue.
	Sequences int
	// DraftedTokens and AcceptedTokens count the tokens drafted for the
	// model to verify (Config.Draft) and those of them it accepted,
	// since it was loaded.
	DraftedTokens, AcceptedTokens int64
	// Replicas are a remote model's upstream replicas
	// (catalog.Model.Remote), in the order of its URLs; nil for a model
	// in process. Active is then the requests in flight on all of them.
	Replicas []ReplicaStats
}

// ReplicaStats is what the engine knows of one replica of a remote
// model's upstream.
type ReplicaStats struct {
	URL string
	// Healthy says the replica takes requests: its last health check
	// passed and no request has failed on it since.
	Healthy  bool
	InFlight int
	// Requests counts those it started streaming, Failures those that
	// failed on it, since the engine started.
	Requests, Failures int64
}
