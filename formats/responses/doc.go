// Package responses is the wire style of POST /v1/responses and the
// stored responses of GET and DELETE /v1/responses/{id}, OpenAI's
// Responses API: the request body (Request, whose Input holds InputItems,
// checked into the hub's formats.Request by Parse and written back by
// NewRequest), the response (Response of output Items, from NewResponse
// or FailedResponse; Response.Result reads it back) and its stream of
// events (Stream, from NewStream).
//
// The style names the engine's fields by its own table, kept next to
// Request: Error maps an engine's error about a field, such as the schema
// at Tools[2].Parameters, to this style's parameter, tools[2].parameters,
// before formats.WriteError writes it in formats.StyleResponses; a failed
// response carries the same name. The shared core (the hub request,
// errors, Server-Sent Events, formats.Continue for previous_response_id)
// is package formats.
//
// Its types are plain data, safe for concurrent reads, except Stream,
// which one goroutine drives; none needs closing.
package responses
