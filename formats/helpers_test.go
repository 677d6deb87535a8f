package formats_test

import (
	"bytes"
	"encoding/json"
)

// jsonIndent indents JSON without escaping HTML and ends it with a newline.
func jsonIndent(out *bytes.Buffer, b []byte) error {
	if err := json.Indent(out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	return nil
}

// bytesBuffer is a bytes.Buffer, for tests that want a writer.
type bytesBuffer = bytes.Buffer
