// Package layers holds no code: its test checks the direction of the
// module's imports. Packages form layers, from internal/ at the bottom
// through the pure stores and limits, the engine, the wire formats and
// decisions, to the HTTP surface and the programs on top, and a file
// imports only its own layer or lower ones. Only the backends, the loader
// that picks one, and the files listed in the test while the decode loop
// moves out of inference import a backend package.
package layers
