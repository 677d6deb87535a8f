// Package messages is the wire style of POST /v1/messages and
// /v1/messages/count_tokens, Anthropic's Messages API: the request body
// (Request, of InputMessages whose Content holds Blocks, checked into the
// hub's formats.Request by Parse and written back by NewRequest), the
// response (Message, from NewMessage; Message.Result reads it back), its
// stream of named events (Stream, from NewStream) and the token count
// (TokenCount).
//
// The style names the engine's fields by its own table, kept next to
// Request: Error maps an engine's error about a field, such as the schema
// at Tools[2].Parameters, to this style's parameter, tools[2].input_schema,
// before formats.WriteError writes it in formats.StyleMessages, whose
// error body is the hub's. The shared core (the hub request, errors,
// Server-Sent Events) is package formats.
//
// Its types are plain data, safe for concurrent reads, except Stream,
// which one goroutine drives; none needs closing.
package messages
