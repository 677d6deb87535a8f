// Package embeddings is the wire style of POST /v1/embeddings, in
// OpenAI's shape: the request body (Request), its checked form for the
// engine (Canonical, from Parse), the response (Response, from
// NewResponse), and the names of the engine's fields in this style
// (Error). Errors are written in the chat style with formats.WriteError;
// the shared core (request errors, decoding, error bodies) is package
// formats.
//
// Its types are plain data: a value is safe for concurrent reads, and
// none needs closing.
package embeddings
