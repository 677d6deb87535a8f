package decision

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// jsonText writes the JSON value raw as text for the model, the same
// whatever spacing it was sent with: object keys in the order sent,
// strings and numbers as JSON writes them but with no escapes beyond what
// JSON needs (no \u escapes for non-ASCII or HTML characters). With an
// indent, every member and element is on a line of its own, indented by
// depth; without, the value is on one line with ", " and ": " between
// items. It fails once the text would pass limit characters: indentation
// can make a deeply nested value grow with the square of its size.
func jsonText(raw []byte, indent string, limit int) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	w := textWriter{limit: limit}
	type level struct {
		object bool
		items  int
	}
	var stack []level
	// item starts a value or a key inside the innermost container.
	item := func() {
		if len(stack) == 0 {
			return
		}
		top := &stack[len(stack)-1]
		if top.items > 0 {
			w.write(",")
			if indent == "" {
				w.write(" ")
			}
		}
		top.items++
		if indent != "" {
			w.write("\n" + strings.Repeat(indent, len(stack)))
		}
	}
	// afterKey says the next token is the value of an object's key.
	afterKey := false
	for {
		t, err := dec.Token()
		if err != nil {
			return "", fmt.Errorf("is not valid JSON: %v", err)
		}
		if d, ok := t.(json.Delim); ok && (d == '}' || d == ']') {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if indent != "" && top.items > 0 {
				w.write("\n" + strings.Repeat(indent, len(stack)))
			}
			w.write(string(d))
		} else {
			isKey := !afterKey && len(stack) > 0 && stack[len(stack)-1].object
			if !afterKey {
				item()
			}
			afterKey = isKey
			switch t := t.(type) {
			case json.Delim:
				w.write(string(t))
				stack = append(stack, level{object: t == '{'})
			case string:
				w.write(quote(t))
				if isKey {
					w.write(": ")
				}
			case json.Number:
				w.write(t.String())
			case bool:
				w.write(fmt.Sprint(t))
			case nil:
				w.write("null")
			}
		}
		if w.over {
			return "", fmt.Errorf("has more than %d characters as JSON text", limit)
		}
		if len(stack) == 0 {
			return w.b.String(), nil
		}
	}
}

// quote is s as a JSON string, escaping only what JSON needs.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// textWriter builds a text of at most limit characters; past it, over is
// set and nothing more is kept.
type textWriter struct {
	b     strings.Builder
	n     int
	limit int
	over  bool
}

func (w *textWriter) write(s string) {
	if w.over {
		return
	}
	w.n += utf8.RuneCountInString(s)
	if w.n > w.limit {
		w.over = true
		return
	}
	w.b.WriteString(s)
}
