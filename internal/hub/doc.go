// Package hub pulls GGUF models from a Hugging Face hub (huggingface.co or
// a server that speaks its HTTP API) into a local cache directory.
//
// A reference names a repository and either a quantization
// (hf.co/ORG/REPO:Q4_K_M) or a file (ORG/REPO/FILE.gguf), at a revision
// (@REV; main by default). Pull asks the hub's API for the revision's
// commit and its files, with the SHA-256 and size that the hub publishes
// for each; picks the model file, every part of a split model
// (NAME-00001-of-00003.gguf) and a projector (mmproj*.gguf) beside it; and
// downloads each through the hub's resolve URL, which redirects to a
// storage host. A download resumes from its partial file with an HTTP
// Range request, after a broken connection or in a later Pull, and the
// file is renamed into place only once its SHA-256 matches; a file whose
// checksum differs is removed and refused.
//
// The cache directory may be shared by several processes and goroutines:
// each file is downloaded by one of them at a time, under a file lock, and
// appears atomically. Its layout is DIR/ORG/REPO/COMMIT/FILE, so that the
// parts of a split model lie side by side under their own names, as
// llama.cpp expects. DIR/ORG/REPO/refs/REV.json keeps what the revision
// named at the last Pull, so that a Pull without a network finds the
// model it pulled before.
package hub
