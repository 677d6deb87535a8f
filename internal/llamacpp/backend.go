package llamacpp

/*
#cgo CFLAGS: -std=c11
#include "bridge.h"
*/
import "C"

import (
	"context"
	"log/slog"
	"runtime/cgo"
	"strings"
	"sync"
	"unsafe"

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

// llama.cpp speaks at INFO about every tensor it loads. Its INFO and WARN
// become slog Debug, its ERROR becomes Warn: the engine reports failures as
// Go errors, so the host's log stays quiet unless it asks for detail.
//
//export inferkitLog
func inferkitLog(level C.int, text *C.char, _ unsafe.Pointer) {
	var l slog.Level
	switch level {
	case C.GGML_LOG_LEVEL_ERROR:
		l = slog.LevelWarn
	case C.GGML_LOG_LEVEL_WARN, C.GGML_LOG_LEVEL_INFO:
		l = slog.LevelDebug
	default:
		l = slog.LevelDebug - 4
	}
	logger := slog.Default()
	if !logger.Enabled(context.Background(), l) {
		return
	}
	msg := strings.TrimSpace(C.GoString(text))
	if msg != "" {
		logger.Log(context.Background(), l, msg, "source", "llama.cpp")
	}
}

//export inferkitProgress
func inferkitProgress(progress C.float, userData unsafe.Pointer) C.bool {
	fn := cgo.Handle(uintptr(userData)).Value().(func(float32) bool)
	return C.bool(fn(float32(progress)))
}
