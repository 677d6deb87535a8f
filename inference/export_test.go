//go:build cgo

package inference

import (
	"context"

	"github.com/inferkit/inferkit/internal/runner"
)

// PromptTokens returns the tokens Prepare made of a request's prompt.
func PromptTokens(p *Prepared) []int32 { return p.plan.prompt }

// TokenText returns the vocabulary entry of tok in the model named name.
func (e *Engine) TokenText(name string, tok int) (string, error) {
	l, err := e.acquire(context.Background(), name)
	if err != nil {
		return "", err
	}
	defer l.release()
	return l.m.llm.TokenText(int32(tok)), nil
}

// OnSearchTurn sets a function that sees each turn a search loop
// prepares after a search, before the engine runs any.
func (e *Engine) OnSearchTurn(f func(*Prepared)) { e.onSearchTurn = f }

// Sweep unloads the models idle for Config.KeepAlive, as the sweeper
// does every second.
func (e *Engine) Sweep() { e.res.sweep() }

// WithSaveThresholds returns cfg with the prompt cache's save thresholds
// (see Config.CacheDir) set to min and long tokens.
func WithSaveThresholds(cfg Config, min, long int) Config {
	cfg.saveMin, cfg.saveLong = min, long
	return cfg
}

// OnMidSave sets a function that runs in the middle of writing each prompt
// cache entry, before the engine saves any.
func (e *Engine) OnMidSave(f func()) { e.disk.OnMidWrite(f) }

// WithDrafter returns cfg with d drafting for every generative model,
// instead of Config.Draft's choice.
func WithDrafter(cfg Config, d runner.Drafter) Config {
	cfg.drafter = func() runner.Drafter { return d }
	return cfg
}
