package formats

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/inferkit/inferkit/inference"
)

// WriteEvent writes one Server-Sent Event: an optional event line, the data
// split into one data line per line, and the blank line that ends it.
func WriteEvent(w io.Writer, event string, data []byte) error {
	var b bytes.Buffer
	if event != "" {
		b.WriteString("event: ")
		b.WriteString(event)
		b.WriteByte('\n')
	}
	for line := range bytes.Lines(data) {
		b.WriteString("data: ")
		b.Write(bytes.TrimRight(line, "\r\n"))
		b.WriteByte('\n')
	}
	if len(data) == 0 {
		b.WriteString("data: \n")
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// WriteJSONEvent marshals v, without HTML escaping, and writes it as one
// event.
func WriteJSONEvent(w io.Writer, event string, v any) error {
	data, err := marshal(v)
	if err != nil {
		return err
	}
	return WriteEvent(w, event, data)
}

// WriteDone writes the `data: [DONE]` sentinel.
func WriteDone(w io.Writer) error {
	return WriteEvent(w, "", []byte("[DONE]"))
}

// messagesDoneEvent is the event name of the messages stream's closing
// `data: [DONE]`, which the spec asks for. Every frame of that stream has
// an `event:` line, so that strict SSE parsers accept it, and the
// sentinel's name must be one that every official Anthropic client skips
// without reading its data, which is not JSON: anthropic-sdk-go's
// ssestream.Stream.Next skips "ping" (and unnamed events) before decoding,
// and would fail on any other name such as "done"; the TypeScript and
// Python SDKs skip "ping" too and ignore names they do not know. "ping"
// is Anthropic's own keep-alive event, so a client that handles it does
// nothing with it.
const messagesDoneEvent = "ping"

// writeNamedDone writes the `data: [DONE]` sentinel with an `event:` line
// of the given name.
func writeNamedDone(w io.Writer, event string) error {
	return WriteEvent(w, event, []byte("[DONE]"))
}

// marshal is json.Marshal without HTML escaping, so that text such as
// "<think>" stays readable on the wire.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Progress tracks what a stream has sent, so that the final event sends
// only what the pieces before it left out: the engine's Final carries the
// whole output, which may or may not have come in pieces already. The
// zero value has sent nothing; one Progress follows one choice, and is
// not safe for concurrent use.
type Progress struct {
	text, reasoning strings.Builder
	calls           int // tool calls sent
	logprobs        int // log-probability entries sent
	summary         strings.Builder
}

// nextSummary returns the piece of the reasoning's summary that ev adds.
func (p *Progress) nextSummary(ev inference.Event) string {
	piece := ev.Summary
	if ev.Final != nil {
		piece = rest(ev.Final.Summary, p.summary.String())
	}
	p.summary.WriteString(piece)
	return piece
}

// Next returns the reasoning, text, tool calls and log-probability
// entries that ev adds.
func (p *Progress) Next(ev inference.Event) (reasoning, text string, calls []inference.ToolCall, lps []inference.TokenLogprob) {
	if ev.Final != nil {
		reasoning = rest(ev.Final.Reasoning, p.reasoning.String())
		text = rest(ev.Final.Text, p.text.String())
		if len(ev.Final.ToolCalls) > p.calls {
			calls = ev.Final.ToolCalls[p.calls:]
		}
		if len(ev.Final.Logprobs) > p.logprobs {
			lps = ev.Final.Logprobs[p.logprobs:]
		}
	} else {
		reasoning, text, calls, lps = ev.Reasoning, ev.Text, ev.ToolCalls, ev.Logprobs
	}
	p.reasoning.WriteString(reasoning)
	p.text.WriteString(text)
	p.calls += len(calls)
	p.logprobs += len(lps)
	return reasoning, text, calls, lps
}

// rest returns what full holds beyond sent.
func rest(full, sent string) string {
	if strings.HasPrefix(full, sent) {
		return full[len(sent):]
	}
	return ""
}
