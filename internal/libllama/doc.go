// Package libllama is the engine's backend on a llama.cpp shared library
// (libllama.so, libllama.dylib) loaded at run time with dlopen: the
// current llama.cpp, from its release archives, a distribution's package
// or the npm package @node-llama-cpp/linux-x64, in place of the build
// compiled into the binary (internal/llamacpp). Nothing links against
// the library; the package declares, in api.h, the part of llama.h of
// the one release whose API it binds (APIVersion), and Open refuses a
// library of another release, or one that lacks a function or lays out
// its parameter structs otherwise, with an error that names both
// versions, before any struct crosses.
//
// The library's ggml backends (its CPU variants, chosen for the machine
// by ggml) are loaded from the library's folder. Its symbols are bound
// to themselves first (RTLD_DEEPBIND), so that a program that also links
// llama.cpp in keeps the two apart.
//
// Its types implement internal/backend's interfaces. What the library
// cannot do for the engine fails with an error wrapping
// backend.ErrUnsupported that names it: images (the library ships no
// multimodal projector), and sequence states (the disk prompt cache) of
// models whose cache layout this package does not derive (state.go);
// where it does, every state is checked field by field before the
// library reads it. Recurrent and hybrid models (Mamba, Jamba, Qwen3.5
// with or without its multi-token-prediction block) take checkpoints of
// their recurrent state (checkpoint.go), checked the same way against
// the layout the library writes for an empty sequence; Mamba's sequence
// states, its recurrent state whole, are checked so too. Every token id, position, sequence id and length is
// checked in Go before it reaches C.
package libllama
