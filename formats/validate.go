package formats

import (
	"encoding/json"
	"reflect"
	"strings"
)

// stringsOrOne decodes a string or an array of strings; a bare string
// becomes a one-element list.
func stringsOrOne(data []byte, into *[]string) error {
	s := strings.TrimSpace(string(data))
	switch {
	case s == "null":
		*into = nil
		return nil
	case strings.HasPrefix(s, `"`):
		var one string
		if err := json.Unmarshal(data, &one); err != nil {
			return err
		}
		*into = []string{one}
		return nil
	case strings.HasPrefix(s, "["):
		var list []string
		if err := json.Unmarshal(data, &list); err != nil {
			return &json.UnmarshalTypeError{Value: "array with a non-string", Type: reflect.TypeFor[[]string]()}
		}
		*into = list
		return nil
	}
	return &json.UnmarshalTypeError{Value: JSONKind(data), Type: reflect.TypeFor[string]()}
}

// JSONKind names the JSON type of a value, for type errors.
func JSONKind(data []byte) string {
	s := strings.TrimSpace(string(data))
	switch {
	case s == "":
		return "nothing"
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "boolean"
	case s[0] == '"':
		return "string"
	case s[0] == '[':
		return "array"
	case s[0] == '{':
		return "object"
	}
	return "number"
}

// Stop is a list of stop strings that decodes from a string or an array of
// strings, as the SDKs send either.
type Stop []string

// UnmarshalJSON accepts a string, an array of strings or null.
func (s *Stop) UnmarshalJSON(data []byte) error {
	return stringsOrOne(data, (*[]string)(s))
}
