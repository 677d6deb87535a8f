//go:build unix

package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openEntry opens the prompt cache entry at path for reading, only when
// it is a regular file: without following a symbolic link, and without
// blocking, so that a FIFO or a device under an entry's name is refused
// at once rather than waited on. The file's mode is read from the open
// file, so that what was checked is what is read.
func openEntry(path string) (*os.File, fs.FileInfo, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		if err == syscall.ELOOP {
			return nil, nil, errors.New("runner: a symbolic link, not a regular file")
		}
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, nil, fmt.Errorf("runner: not a regular file (file type %#o)", st.Mode&syscall.S_IFMT)
	}
	f := os.NewFile(uintptr(fd), path)
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}
