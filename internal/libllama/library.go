package libllama

/*
#cgo CFLAGS: -std=gnu11
#cgo linux LDFLAGS: -ldl -lm
#include <stdlib.h>
#include "api.h"
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/cgo"
	"strings"
	"sync"
	"unsafe"

	"github.com/inferkit/inferkit/internal/backend"
)

// APIVersion is the llama.cpp release whose llama.h the package binds.
const APIVersion = C.IKL_API_VERSION

// VersionError is Open's error for a library that is not of APIVersion:
// another release, or one whose functions or structs differ from it.
type VersionError struct {
	Path string
	// Found is the library's own version (llama_version), "" when it has
	// none.
	Found string
	// Reason says what differs.
	Reason string
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("libllama: %s (found llama.cpp %q, want %s)", e.Reason, e.Found, APIVersion)
}

// Library is a loaded llama.cpp shared library. It is safe for concurrent
// use and never unloaded: the library's threads and its ggml backends
// stay with the process.
type Library struct {
	api     *C.struct_ikl_api
	path    string
	version string
}

// Path is the library's file, its links resolved.
func (l *Library) Path() string { return l.path }

// Version is the library's own version (llama_version).
func (l *Library) Version() string { return l.version }

// loaded holds the libraries loaded by this process, by resolved path.
// A library is process-wide C state (its logger, its ggml backends, its
// threads), loaded once and kept: this is the one piece of state the
// package keeps outside a value.
var loaded = struct {
	sync.Mutex
	m map[string]*Library
}{m: map[string]*Library{}}

// Open loads the llama.cpp library at path, or returns the one this
// process loaded from that file. A missing file is an error wrapping
// fs.ErrNotExist; a library of another API, a *VersionError.
func Open(path string) (*Library, error) {
	if path == "" {
		return nil, fmt.Errorf("libllama: no library path")
	}
	abs, err := filepath.Abs(path)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("libllama: library %s: %w", path, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("libllama: library %s: %w", path, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("libllama: library %s is a folder; name the libllama file in it", path)
	}
	loaded.Lock()
	defer loaded.Unlock()
	if l := loaded.m[abs]; l != nil {
		return l, nil
	}
	cpath := C.CString(abs)
	defer C.free(unsafe.Pointer(cpath))
	cdir := C.CString(filepath.Dir(abs))
	defer C.free(unsafe.Pointer(cdir))
	var why, found [1024]C.char
	api := C.ikl_open(cpath, cdir, &why[0], C.size_t(len(why)), &found[0], C.size_t(len(found)))
	if api == nil {
		msg, v := C.GoString(&why[0]), C.GoString(&found[0])
		if v != "" || strings.Contains(msg, "llama_version") {
			return nil, &VersionError{Path: abs, Found: v, Reason: msg}
		}
		return nil, fmt.Errorf("libllama: %s", msg)
	}
	l := &Library{api: api, path: abs, version: C.GoString(C.ikl_llama_version(api))}
	loaded.m[abs] = l
	return l, nil
}

// libllamaLog logs the library's log lines as backend.LlamaLog does.
//
//export libllamaLog
func libllamaLog(level C.int, text *C.char, _ unsafe.Pointer) {
	backend.LlamaLog(int(level), C.GoString(text), "libllama")
}

//export libllamaProgress
func libllamaProgress(progress C.float, userData unsafe.Pointer) C.bool {
	fn := cgo.Handle(uintptr(userData)).Value().(func(float32) bool)
	return C.bool(fn(float32(progress)))
}
