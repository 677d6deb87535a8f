//go:build cgo

package inference

import (
	"fmt"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/goengine"
	"github.com/inferkit/inferkit/internal/libllama"
	"github.com/inferkit/inferkit/internal/llamacpp"
)

// This file is the loader: the one file of the package that imports a
// backend. A new backend is its folder under internal/ and a case here.

// openLibrary opens the llama.cpp library at path (Config.Library) and
// returns its loader: a library of another API is refused here, at New.
func openLibrary(path string) (func(string, func(float32) bool) (backend.Model, error), error) {
	lib, err := libllama.Open(path)
	if err != nil {
		return nil, err
	}
	return func(model string, progress func(float32) bool) (backend.Model, error) {
		m, err := lib.LoadModel(model, libllama.ModelParams{Progress: progress})
		if err != nil {
			return nil, err // not a nil *libllama.Model in a non-nil interface
		}
		return m, nil
	}, nil
}

// loadBackend loads the model file at path with the backend that runs
// it, reporting the fraction loaded to progress (nil: none): the one
// Config.Backend names; or, by default, the library of Config.Library
// when there is one, then the compiled-in llama.cpp, then Ollama's Go
// engine for the files llama.cpp cannot load (architectures newer than
// its build, such as qwen35 and gemma4). When none loads the file, the
// error gives every reason.
func (e *Engine) loadBackend(path string, progress func(float32) bool) (backend.Model, error) {
	var libErr error
	if e.cfg.loadLibrary != nil && (e.cfg.Backend == "" || e.cfg.Backend == backend.LibLlama) {
		m, err := e.cfg.loadLibrary(path, progress)
		if err == nil || e.cfg.Backend == backend.LibLlama {
			return m, err
		}
		libErr = err
		e.cfg.Logger.Info("inference: the llama.cpp library cannot load the file; trying the compiled-in llama.cpp", "path", path, "why", err)
	}
	m, err := e.loadCompiledIn(path, progress)
	if err != nil && libErr != nil {
		return nil, fmt.Errorf("%w (and the llama.cpp library: %v)", err, libErr)
	}
	return m, err
}

// loadCompiledIn loads the model file at path with the compiled-in
// llama.cpp, or the Go engine where Config.Backend says so or llama.cpp
// cannot load the file.
func (e *Engine) loadCompiledIn(path string, progress func(float32) bool) (backend.Model, error) {
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
