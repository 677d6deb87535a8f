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
// a 400 whose param is the style's name of the field at fault.
//
// The package is pure Go and holds no state; its values are safe for
// concurrent use unless their doc says otherwise.
package formats
