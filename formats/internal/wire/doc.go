// Package wire holds what the wire styles under formats share in reading
// a request and in writing one back, and that a library user has no use
// for: the checks of the parameters several styles take (sampling,
// effort, tool names and choices, metadata, schemas), images given as
// data: or http URLs, web search options and locations, the decoding of
// content that may be a string or a list, the url_citation spans, the
// log-probabilities of the OpenAI styles and the Progress of a stream.
//
// Its checks fail with the hub's *formats.RequestError, so it imports
// package formats; the hub does not import it. It holds no state: its
// functions are safe for concurrent use, and a Progress follows one
// stream.
package wire
