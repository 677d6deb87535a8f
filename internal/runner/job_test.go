package runner

import "testing"

// A work without a sampler or grammar (one whose making failed early)
// closes without either.
func TestWorkClosesWithoutGrammar(t *testing.T) {
	(&Work{}).Close()
}
