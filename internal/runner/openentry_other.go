//go:build !unix

package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// openEntry opens the prompt cache entry at path for reading, only when
// it is a regular file, and the same file that was checked.
func openEntry(path string) (*os.File, fs.FileInfo, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("runner: not a regular file (%s)", before.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || !os.SameFile(before, info) {
		f.Close()
		return nil, nil, errors.New("runner: the file changed while it was opened")
	}
	return f, info, nil
}
