package formats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Decode decodes the JSON data into v. A syntax error, an empty body or
// a value of the wrong JSON type becomes a *RequestError; for a type error
// its Param is the path of the value, such as "messages[0].content".
// Unknown fields are ignored.
func Decode(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &RequestError{Code: "invalid_json", Message: "the request body is empty; expected a JSON object"}
	}
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var req *RequestError
	switch {
	case errors.As(err, &syntax):
		return &RequestError{Code: "invalid_json", Message: fmt.Sprintf("malformed JSON at byte %d: %v", syntax.Offset, syntax)}
	case errors.As(err, &typ):
		path := pathAt(data, typ.Offset)
		if path == "" {
			path = typ.Field
		}
		return TypeError(path, typ.Value, typ.Type.Kind().String())
	case errors.As(err, &req):
		return req
	case strings.HasPrefix(err.Error(), "unexpected end of JSON input"):
		return &RequestError{Code: "invalid_json", Message: "malformed JSON: unexpected end of input"}
	}
	return &RequestError{Code: "invalid_json", Message: "malformed JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
}

// TypeError reports a value of the wrong JSON type at path.
func TypeError(path, got, want string) *RequestError {
	switch want {
	case "slice", "array":
		want = "array"
	case "struct", "map":
		want = "object"
	case "int", "int64", "int32", "uint", "uint64":
		want = "integer"
	case "float64", "float32":
		want = "number"
	case "bool":
		want = "boolean"
	}
	if path == "" {
		return &RequestError{Code: "invalid_type", Message: fmt.Sprintf("invalid type for the request body: expected %s, got %s", want, got)}
	}
	return &RequestError{Param: path, Code: "invalid_type", Message: fmt.Sprintf("invalid type for %s: expected %s, got %s", path, want, got)}
}

// pathAt returns the path, such as "messages[1].content", of the JSON value
// that ends (for a scalar) or opens (for an object or array) at byte offset
// off of data, as encoding/json reports it in an UnmarshalTypeError.
func pathAt(data []byte, off int64) string {
	type frame struct {
		object bool
		key    string
		index  int
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for i, f := range stack {
			if f.object {
				if i > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			} else {
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
			}
		}
		return b.String()
	}
	// expectKey is true when the next string token in an object is a key.
	expectKey := false
	// valueDone advances the innermost container past one value.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		top := &stack[len(stack)-1]
		if top.object {
			expectKey = true
		} else {
			top.index++
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		at := dec.InputOffset()
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if at == off {
					return path()
				}
				stack = append(stack, frame{object: t == '{'})
				expectKey = t == '{'
			case '}', ']':
				stack = stack[:len(stack)-1]
				valueDone()
			}
			continue
		case string:
			if expectKey {
				stack[len(stack)-1].key = t
				expectKey = false
				continue
			}
		}
		if at == off {
			return path()
		}
		valueDone()
	}
}
