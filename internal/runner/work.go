package runner

import (
	"errors"
	"time"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/family"
)

// The runner's errors, which a job ends with.
var (
	// ErrClosed: the runner stopped before the work ended.
	ErrClosed = errors.New("runner: stopped")
	// ErrQueueFull: Submit found the queue full.
	ErrQueueFull = errors.New("runner: the queue is full")
	// ErrGrammar: the work's grammar admits no further token.
	ErrGrammar = errors.New("runner: the output's grammar admits no further token")
	// ErrNoToken: the model's logits gave no token to sample (missing, or
	// none a number), with no grammar to blame.
	ErrNoToken = errors.New("runner: the model gave no token to sample")
)

// Work is one queued request: its prompt, limits, sampler and the job
// that carries its events back. The runner owns it from Submit on, and
// closes its Sampler and Grammar; a caller that does not submit a Work it
// made calls Close.
type Work struct {
	Job       *Job
	Prompt    []backend.Token
	Images    []ImageSpan // the prompt's images, in order
	MaxTokens int
	Stops     []string
	Sampler   backend.Sampler
	Grammar   backend.Grammar // constrains the answer, or nil
	Family    *family.Family  // parses the output; nil: plain text
	Tools     []family.Tool   // the tools the model sees
	Single    bool            // at most one tool call
	// MaxCall bounds the bytes of a call of the tool BoundCall where no
	// grammar does: past it, the work ends (FinishLength) with the call
	// dropped, and its Result says CallCut. A call is BoundCall's when,
	// of the Tools' names, BoundCall's comes first in its text (every
	// family writes the name before the arguments). 0: no bound.
	MaxCall   int
	BoundCall string
	Logprobs  bool // record the answer tokens' log-probabilities
	Top       int  // and this many alternatives each
	PromptLP  bool // record the prompt tokens' log-probabilities
	NoOutput  bool // decode the prompt only
	// Speculative lets the runner's Drafter propose tokens for this
	// work (Config.Drafter).
	Speculative bool

	// Score, when set, makes this scoring work: the prompt is the
	// prefix, and the branches are decoded once it is in the KV cache.
	Score *Score

	// Thinking: the prompt opened a thinking section. Budget bounds the
	// tokens spent in one (-1: no bound), closed with ThinkClose.
	Thinking   bool
	Budget     int
	ThinkClose []backend.Token
}

// Close frees what the work holds in the backend.
func (w *Work) Close() {
	if w.Sampler != nil {
		w.Sampler.Close()
	}
	if w.Grammar != nil {
		w.Grammar.Close()
	}
}

// Score is what scoring work adds: its branches' tokens and candidate
// trees, and the result the runner fills in before the job finishes.
type Score struct {
	Branches [][]backend.Token
	Trees    []*CandidateTree
	Result   ScoreResult
}

// ScoreResult is the scores of the branches, in order, and the tokens
// the work took.
type ScoreResult struct {
	Branches []BranchScore
	Usage    Usage
}

// BranchScore is the scores of one branch's candidates, in order.
type BranchScore struct {
	LogProbs, Probabilities []float64
}

// Event is what a job's reader gets: pieces of output as they come, and
// last (Final set) the whole result.
type Event struct {
	Text, Reasoning string
	Calls           []family.Call
	// Logprobs are the entries of the answer tokens since the previous
	// event; PromptLogprobs the prompt's, on the first event.
	Logprobs, PromptLogprobs []Logprob
	Final                    *Result
}

// Finish says why generation ended.
type Finish int

// The reasons generation ends.
const (
	FinishStop         Finish = iota // the end of the turn
	FinishLength                     // MaxTokens ran out
	FinishStopSequence               // one of the stop strings
	FinishToolCalls                  // the turn ended after tool calls
)

// Result is a finished generation: its text, reasoning and calls whole,
// and why and how it ended.
type Result struct {
	Text, Reasoning string
	Finish          Finish
	StopSequence    string // with FinishStopSequence
	StopToken       int    // the end-of-turn token, with FinishStop and FinishToolCalls
	Calls           []family.Call
	// CallCut says the work ended inside a tool call, which Work.MaxCall
	// cut short (the call is dropped).
	CallCut        bool
	Logprobs       []Logprob
	PromptLogprobs []Logprob
	Usage          Usage
	Timings        Timings
}

// Logprob is one token and its natural-log probability under the logits
// it was sampled from, with the most likely tokens there.
type Logprob struct {
	Token   int
	Bytes   []byte
	Logprob float64
	Top     []TopLogprob
}

// TopLogprob is one of the most likely tokens at a position.
type TopLogprob struct {
	Token   int
	Bytes   []byte
	Logprob float64
}

// Usage counts the tokens of a work: Drafted are the tokens a Drafter
// proposed and the step decoded, Accepted those of them emitted.
type Usage struct {
	Prompt, Cached, Completion, Reasoning int
	Drafted, Accepted                     int
}

// Timings measure where a work spent its time: waiting for a sequence,
// from admission to the first token, from there to the end, and thinking.
type Timings struct {
	Queued, Prefill, Decode, Thinking time.Duration
}
