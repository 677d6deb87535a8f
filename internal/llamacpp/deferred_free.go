package llamacpp

// The link sends ggml_backend_free through deferred_free.c, which frees a
// context's or a projector's backends only after their scheduler.

/*
#cgo LDFLAGS: -Wl,--wrap=ggml_backend_free
*/
import "C"
