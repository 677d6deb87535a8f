// Package backendtest holds checks that every backend's implementation of
// an interface of package backend passes, for the backends' own tests to
// run on their models (as testing/slogtest does for slog handlers).
package backendtest
