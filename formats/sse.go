package formats

import (
	"bytes"
	"encoding/json"
	"io"
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
	data, err := Marshal(v)
	if err != nil {
		return err
	}
	return WriteEvent(w, event, data)
}

// WriteDone writes the `data: [DONE]` sentinel.
func WriteDone(w io.Writer) error {
	return WriteEvent(w, "", []byte("[DONE]"))
}

// Marshal is json.Marshal without HTML escaping, so that text such as
// "<think>" stays readable on the wire.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
