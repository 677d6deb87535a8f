// Package boundedtest runs code under test within a time bound, so that a
// fuzz target or a test reports a hang or a panic of the code it checks as
// a failure with its input, rather than a test binary killed by its
// timeout.
package boundedtest

import (
	"runtime/debug"
	"testing"
	"time"
)

// Run calls fn in a goroutine of its own and returns its error. It fails
// tb, saying what (describes the input), when fn panics, with the panic's
// stack, or runs longer than limit; a goroutine past the limit is left
// behind, and tb stops.
func Run(tb testing.TB, limit time.Duration, what string, fn func() error) error {
	tb.Helper()
	type result struct {
		err   error
		panic any
		stack []byte
	}
	done := make(chan result, 1)
	go func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				res.panic, res.stack = p, debug.Stack()
			}
			done <- res
		}()
		res.err = fn()
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case res := <-done:
		if res.panic != nil {
			tb.Fatalf("%s: panic: %v\n%s", what, res.panic, res.stack)
		}
		return res.err
	case <-timer.C:
		tb.Fatalf("%s: runs past %v", what, limit)
	}
	return nil // not reached: Fatalf stops the test
}
