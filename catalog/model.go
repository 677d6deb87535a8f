package catalog

import (
	"errors"
	"fmt"
)

// Model is one entry of the catalog: an id and its aliases naming a GGUF
// file. Several entries may name the same file; an engine loads it once.
// The zero value is not valid: ID and Path are required.
type Model struct {
	// ID is the name requests use, such as "core-2-5-mini".
	ID string
	// Aliases are further names for the same entry.
	Aliases []string
	// Path is the GGUF file.
	Path string
}

// Validate reports the first problem of a list of entries: a missing id or
// path, or a name used twice.
func Validate(models []Model) error {
	seen := map[string]bool{}
	for i, m := range models {
		if m.ID == "" {
			return fmt.Errorf("catalog: model %d has no id", i)
		}
		if m.Path == "" {
			return fmt.Errorf("catalog: model %q has no path", m.ID)
		}
		for _, name := range append([]string{m.ID}, m.Aliases...) {
			if name == "" {
				return fmt.Errorf("catalog: model %q has an empty alias", m.ID)
			}
			if seen[name] {
				return fmt.Errorf("catalog: %w: %q", ErrDuplicate, name)
			}
			seen[name] = true
		}
	}
	return nil
}

// ErrDuplicate means two entries share an id or alias.
var ErrDuplicate = errors.New("model name used twice")
