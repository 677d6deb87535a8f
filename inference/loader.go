//go:build cgo

package inference

import (
	"fmt"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/goengine"
	"github.com/inferkit/inferkit/internal/llamacpp"
)

// This file is the loader: the one file of the package that imports a
// backend. A new backend is its folder under internal/ and a case here.

// loadBackend loads the model file at path with the backend that runs
// it, reporting the fraction loaded to progress (nil: none): the one
// Config.Backend names, or llama.cpp, and Ollama's Go engine for the files
// llama.cpp cannot load (architectures newer than its build, such as
// qwen35 and gemma4). When neither loads the file, the error gives both
// reasons.
func (e *Engine) loadBackend(path string, progress func(float32) bool) (backend.Model, error) {
	var llamaErr error
	if e.cfg.Backend != backend.Ollama {
		llm, err := llamacpp.LoadModel(path, llamacpp.ModelParams{Progress: progress})
		if err == nil {
			return llm, nil
		}
		if e.cfg.Backend == backend.LlamaCpp {
			return nil, err
		}
		llamaErr = err
		e.cfg.Logger.Info("inference: llama.cpp cannot load the file; trying Ollama's Go engine", "path", path, "why", err)
	}
	gm, err := goengine.Load(path, goengine.Params{Threads: e.cfg.Threads, Progress: progress})
	switch {
	case err == nil:
		return gm, nil
	case llamaErr != nil:
		return nil, fmt.Errorf("%w (and Ollama's Go engine: %v)", llamaErr, err)
	}
	return nil, err // not a nil *goengine.Model in a non-nil interface
}

// schemaGrammar converts a JSON Schema to GBNF with llama.cpp's
// converter, after checking the schema's bounds.
func schemaGrammar(schema []byte) (string, error) { return llamacpp.SchemaGrammar(schema) }
