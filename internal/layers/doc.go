// Package layers holds no code: its test checks the direction of the
// module's imports. Packages form layers, from internal/ at the bottom
// through the pure stores and limits, the engine, the wire formats and
// decisions, to the HTTP surface and the programs on top, and a file
// imports only its own layer or lower ones. Only the backends, the loader
// that picks one, and the tests listed in the test that check a file
// against a backend directly import a backend package. The decode
// machinery (internal/runner) imports only the backend seam and the model
// families.
package layers
