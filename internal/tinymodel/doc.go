// Package tinymodel writes tiny GGUF language models, vision projectors for
// them, their vocabularies and test pictures: real models with random
// weights, for tests. It is the implementation behind the public package
// inference/inferencetest, which re-exports every exported name here and
// whose package documentation is the guide to using it.
//
// The package sits on the ground floor of the module so that the engine's
// own packages (the backends, the runner, internal/testmodels) can write
// models for their tests without importing upward: it imports nothing of
// the module but internal/family, for the engine's ChatML template. Its
// tests alone load the files it writes into llama.cpp and Ollama's Go
// engine, to check that they are read as meant.
//
// Users meet it as inferencetest, so its errors start with "inferencetest:"
// and the files it writes are named "inferencetest" (general.name) unless
// Options.Name says otherwise.
package tinymodel
