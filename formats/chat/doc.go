// Package chat is the wire style of POST /v1/chat/completions (and
// /v1/web/chat/completions), OpenAI's chat completions: the request body
// (Request, checked into the hub's formats.Request by Parse, and written
// back from one by NewRequest), the response (Completion, from
// NewCompletion) and its stream of chunks (Stream, from NewStream).
//
// The style names the engine's fields by its own table, kept next to
// Request: Error maps an engine's error about a field, such as the schema
// at Tools[2].Parameters, to this style's parameter,
// tools[2].function.parameters, before formats.WriteError writes it in
// formats.StyleChat. Legacy completions (package completions) answer their
// errors in these names too. The shared core (the hub request, errors,
// Server-Sent Events) is package formats.
//
// Its types are plain data, safe for concurrent reads, except Stream,
// which one goroutine drives; none needs closing.
package chat
