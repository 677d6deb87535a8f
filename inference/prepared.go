package inference

// Prepared is a generation request that Engine.Prepare has checked,
// rendered with the model's chat template and tokenized: the one place
// where a request is validated and its prompt counted. Admission (rate
// limits, spend caps) reads its counts, and Engine.Run decodes its
// tokens, so that what is counted is what the model sees.
//
// A Prepared holds no resources: one that is never run needs no cleanup.
// It is read-only after Prepare and may be shared between goroutines; run
// it at most once. A Prepared made by hand carries only its exported
// fields, which an Engine does not run (fakes of an engine may).
type Prepared struct {
	// Request is the request, as given to Prepare.
	Request Request
	// InputTokens is the number of prompt tokens.
	InputTokens int
	// MaxOutputTokens is the most tokens the run may generate: the
	// request's MaxTokens, lowered to the room the context has left when
	// it is 0 or ClampMaxTokens is set.
	MaxOutputTokens int

	plan *plan
}

// plan is what Run needs of a Prepared beyond its request.
type plan struct {
	engine *Engine
	prompt []int32 // the prompt's tokens, when it holds no image
	// texts are the tokens of the text around the prompt's images, one
	// more than images, which Run encodes.
	texts    [][]int32
	images   [][]byte
	thinking bool   // the prompt opens a thinking section
	grammar  string // GBNF of the answer, or ""
	budget   int    // thinking tokens, -1 for no bound
	// tools, for a request with Search or MCP, is what its later turns
	// need; the plan is its first turn's.
	tools *toolPlan
	// remote, for a remote model, is its upstream request; the fields
	// above about tokens are then empty.
	remote *remotePlan
}

// toolPlan is a request with tools that the engine runs (Search, MCP)
// as it was given, and their options with their defaults.
type toolPlan struct {
	search *SearchOptions
	mcp    *MCPOptions
	req    Request
}
