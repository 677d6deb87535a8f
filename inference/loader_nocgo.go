//go:build !cgo

package inference

import (
	"errors"

	"github.com/inferkit/inferkit/internal/backend"
)

// errNoCgo explains why an engine built without cgo loads no model.
var errNoCgo = errors.New("inference: built with CGO_ENABLED=0; the backends (llama.cpp, Ollama's Go engine, a llama.cpp library loaded at run time) need cgo")

// loadBackend fails: every backend needs cgo.
func (e *Engine) loadBackend(string, func(float32) bool) (backend.Model, error) {
	return nil, errNoCgo
}

// openLibrary fails: loading a library at run time needs cgo.
func openLibrary(string) (func(string, func(float32) bool) (backend.Model, error), error) {
	return nil, errNoCgo
}

// schemaGrammar fails: llama.cpp's converter needs cgo.
func schemaGrammar([]byte) (string, error) { return "", errNoCgo }
