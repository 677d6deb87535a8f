package wire

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/inferkit/inferkit/formats"
)

// Parse decodes body as a T and returns its canonical Request.
func Parse[T any, PT interface {
	*T
	Canonical() (formats.Request, error)
}](body []byte) (formats.Request, error) {
	var r T
	if err := formats.Decode(body, &r); err != nil {
		return formats.Request{}, err
	}
	return PT(&r).Canonical()
}

// Prefixed returns err with its param placed under prefix: the param
// "[1].text" under "messages[0].content" is "messages[0].content[1].text".
func Prefixed(prefix string, err error) error {
	var re *formats.RequestError
	if !errors.As(err, &re) {
		return err
	}
	out := *re
	switch {
	case re.Param == "":
		out.Param = prefix
	case strings.HasPrefix(re.Param, "["):
		out.Param = prefix + re.Param
	default:
		out.Param = prefix + "." + re.Param
	}
	if re.Param != "" {
		out.Message = strings.Replace(re.Message, re.Param, out.Param, 1)
	} else {
		out.Message = strings.Replace(re.Message, "the request body", out.Param, 1)
	}
	return &out
}

// DecodeTextOrList decodes content that the styles accept as a string, an
// array or null: the string into text, the array into list. set records
// that the field was present; a wrong type is kept in typeErr (reported
// with its path by the request's validation) rather than returned.
func DecodeTextOrList[T any](data []byte, want string, text *string, list *[]T, set *bool, typeErr *error) error {
	switch kind := formats.JSONKind(data); kind {
	case "null":
	case "string":
		*set = true
		return json.Unmarshal(data, text)
	case "array":
		*set = true
		*list = []T{}
		*typeErr = formats.Decode(data, list)
	default:
		*typeErr = formats.TypeError("", kind, want)
	}
	return nil
}
