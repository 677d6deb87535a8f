// Package formats holds the wire formats of the Inference API: the JSON of
// chat completions, messages, responses, model lists and errors, their
// validation (a *RequestError names the offending parameter), conversion to
// and from the canonical [inference.Request], [inference.Result] and
// [inference.Event], and the Server-Sent Events encoders of the three
// streaming styles.
//
// Formats are hub and spoke: every style parses into one [Request] (an
// [inference.Request] plus what the engine does not read itself, such as
// the stream flag or the reasoning effort), and is built back from it, so a
// chat request converts into a messages or responses request through
// [Request] without a converter per pair.
//
// Tool calls are chat message.tool_calls (finish_reason tool_calls),
// messages tool_use blocks (stop_reason tool_use) and responses
// function_call items, blocking and streamed in each style's own events;
// their results are tool messages, tool_result blocks and
// function_call_output items, all the engine's RoleTool messages. An
// invalid request the engine rejects (a schema it cannot enforce, say) is
// a 400 whose param is the style's name of the field at fault: the
// engine's *inference.FieldError carries the field as an [inference.Path],
// and each style maps it through a [ParamNames] table of its own, kept
// next to its request type.
//
// # Layout
//
// This package is the hub: the canonical [Request], errors and their
// bodies ([Error], [RequestError], [WriteError]), the request decoding
// every style shares ([Decode], [Invalid], [Missing], [TypeError]) and
// Server-Sent Events ([WriteEvent], [Progress]), and what the styles
// share in building a request ([Sampling], [Request.SetLogprobs]) or a
// response ([Options], [TokenText]). Each wire style is moving into a
// package of its own below it, with short names:
//
//   - formats/embeddings: embeddings.Request, embeddings.Response
//   - formats/completions: OpenAI's legacy completions,
//     completions.Request, completions.Response, completions.Stream
//
// Chat completions, messages and responses are still files here
// (chat.go, messages.go, responses.go). System One's error bodies and
// model list (systemone.go) stay in the hub: an error's body in each
// [Style] is the hub's to write, and the decision request itself is
// package decision's.
//
// A new wire style touches three places: its package under formats (the
// request and response types, Parse, the conversion to and from
// [Request] or the engine's own request, and its ParamNames table), its
// handler file in httpapi, and its row in httpapi's route table
// (httpapi.go; the route list of httpapi's doc.go, which a test checks
// against the table, gets the same line). A style whose error body has
// a shape of its own also adds a [Style] here.
//
// The package is pure Go and holds no state; its values are safe for
// concurrent use unless their doc says otherwise.
package formats
