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
// The package is pure Go and holds no state; its values are safe for
// concurrent use unless their doc says otherwise.
package formats
