package messages

import (
	"io"

	"github.com/inferkit/inferkit/formats"
)

// DoneEvent is the event name of the messages stream's closing
// `data: [DONE]`, which the spec asks for. Every frame of that stream has
// an `event:` line, so that strict SSE parsers accept it, and the
// sentinel's name must be one that every official Anthropic client skips
// without reading its data, which is not JSON: anthropic-sdk-go's
// ssestream.Stream.Next skips "ping" (and unnamed events) before decoding,
// and would fail on any other name such as "done"; the TypeScript and
// Python SDKs skip "ping" too and ignore names they do not know. "ping"
// is Anthropic's own keep-alive event, so a client that handles it does
// nothing with it.
const DoneEvent = "ping"

// writeNamedDone writes the `data: [DONE]` sentinel with an `event:` line
// of the given name.
func writeNamedDone(w io.Writer, event string) error {
	return formats.WriteEvent(w, event, []byte("[DONE]"))
}
