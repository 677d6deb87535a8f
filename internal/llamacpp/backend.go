package llamacpp

/*
#cgo CFLAGS: -std=c11
#include "bridge.h"
*/
import "C"

import (
	"runtime/cgo"
	"sync"
	"unsafe"

	"github.com/inferkit/inferkit/internal/backend"

	// The package compiles and links llama.cpp and ggml into the binary;
	// this package calls the same C symbols through llama.h.
	_ "github.com/ollama/ollama/llama"
)

// initBackend initialises llama.cpp once per process and routes its log
// through log/slog. llama.cpp's logger is process-wide C state, so this is
// the one place where the package keeps a once.
var initBackend = sync.OnceFunc(func() {
	C.llama_backend_init()
	C.inferkit_route_logs()
})

// inferkitLog logs llama.cpp's log lines as backend.LlamaLog does: its
// INFO about every tensor it loads at Debug.
//
//export inferkitLog
func inferkitLog(level C.int, text *C.char, _ unsafe.Pointer) {
	backend.LlamaLog(int(level), C.GoString(text), "llama.cpp")
}

//export inferkitProgress
func inferkitProgress(progress C.float, userData unsafe.Pointer) C.bool {
	fn := cgo.Handle(uintptr(userData)).Value().(func(float32) bool)
	return C.bool(fn(float32(progress)))
}
