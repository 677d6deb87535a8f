//go:build !cgo

package inference

import (
	"context"
	"errors"
	"iter"
)

// errNoCgo explains why an engine built without cgo cannot run.
var errNoCgo = errors.New("inference: built with CGO_ENABLED=0; the engine runs llama.cpp and needs cgo")

// Engine runs models. This build has no cgo, so New always fails; the
// request and result types still build for packages that convert them.
type Engine struct{}

// New fails: the engine needs cgo.
func New(Config) (*Engine, error) { return nil, errNoCgo }

// Close does nothing.
func (*Engine) Close() error { return nil }

// Generate fails: the engine needs cgo.
func (*Engine) Generate(context.Context, Request) (Result, error) { return Result{}, errNoCgo }

// Stream fails: the engine needs cgo.
func (*Engine) Stream(context.Context, Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) { yield(Event{}, errNoCgo) }
}

// Prepare fails: the engine needs cgo.
func (*Engine) Prepare(context.Context, Request) (*Prepared, error) { return nil, errNoCgo }

// Run fails: the engine needs cgo.
func (*Engine) Run(context.Context, *Prepared) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) { yield(Event{}, errNoCgo) }
}

// Models returns nothing.
func (*Engine) Models() []ModelInfo { return nil }

// Stats returns nothing.
func (*Engine) Stats() []ModelStats { return nil }

// CountTokens fails: the engine needs cgo.
func (*Engine) CountTokens(Request) (int, error) { return 0, errNoCgo }

// Score fails: the engine needs cgo.
func (*Engine) Score(context.Context, ScoreRequest) (ScoreResult, error) {
	return ScoreResult{}, errNoCgo
}

// scorePlan is empty without cgo.
type scorePlan struct{}

// PrepareScore fails: the engine needs cgo.
func (*Engine) PrepareScore(ScoreRequest) (*PreparedScore, error) { return nil, errNoCgo }

// RunScore fails: the engine needs cgo.
func (*Engine) RunScore(context.Context, *PreparedScore) (ScoreResult, error) {
	return ScoreResult{}, errNoCgo
}

// Tokenize fails: the engine needs cgo.
func (*Engine) Tokenize(string, string) ([]int, error) { return nil, errNoCgo }

// RenderPrompt fails: the engine needs cgo.
func (*Engine) RenderPrompt(Request) (string, error) { return "", errNoCgo }

// Rank fails: the engine needs cgo.
func (*Engine) Rank(context.Context, RankRequest) (RankResult, error) { return RankResult{}, errNoCgo }

// embedPlan is empty without cgo.
type embedPlan struct{}

// Embed fails: the engine needs cgo.
func (*Engine) Embed(context.Context, EmbedRequest) (EmbedResult, error) {
	return EmbedResult{}, errNoCgo
}

// PrepareEmbed fails: the engine needs cgo.
func (*Engine) PrepareEmbed(EmbedRequest) (*PreparedEmbed, error) { return nil, errNoCgo }

// RunEmbed fails: the engine needs cgo.
func (*Engine) RunEmbed(context.Context, *PreparedEmbed) (EmbedResult, error) {
	return EmbedResult{}, errNoCgo
}

// Load fails: the engine needs cgo.
func (*Engine) Load(context.Context, string) error { return errNoCgo }

// Unload fails: the engine needs cgo.
func (*Engine) Unload(context.Context, string) error { return errNoCgo }
