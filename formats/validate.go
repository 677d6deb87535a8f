package formats

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/inferkit/inferkit/inference"
)

// Limits of the spec and of the common SDK parameters.
const (
	maxMetadataPairs = 16
	maxMetadataKey   = 64
	maxMetadataValue = 512
	maxStops         = 16
)

var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// checkRange reports a number outside lo..hi.
func checkRange(param string, v *float64, lo, hi float64) error {
	if v != nil && (*v < lo || *v > hi) {
		return Invalid(param, "%s must be between %g and %g, got %g", param, lo, hi, *v)
	}
	return nil
}

// checkMin reports an integer below lo.
func checkMin(param string, v *int, lo int) error {
	if v != nil && *v < lo {
		return Invalid(param, "%s must be at least %d, got %d", param, lo, *v)
	}
	return nil
}

// checkToolName reports a function name outside [a-zA-Z0-9_-]{1,64}.
func checkToolName(param, name string) error {
	if name == "" {
		return Missing(param)
	}
	if !toolNamePattern.MatchString(name) {
		return Invalid(param, "%s must be 1 to 64 characters of a-z, A-Z, 0-9, underscore and dash, got %q", param, name)
	}
	return nil
}

// checkSchema reports a JSON Schema that is present but not an object.
func checkSchema(param string, raw json.RawMessage) error {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" || strings.HasPrefix(s, "{") {
		return nil
	}
	return Invalid(param, "%s must be a JSON Schema object", param)
}

// checkMetadata applies the spec's limits: 16 pairs, keys up to 64 and
// values up to 512 characters.
func checkMetadata(param string, m map[string]string) error {
	if len(m) > maxMetadataPairs {
		return Invalid(param, "%s may hold at most %d pairs, got %d", param, maxMetadataPairs, len(m))
	}
	for k, v := range m {
		if utf8.RuneCountInString(k) > maxMetadataKey {
			return Invalid(param, "%s keys may be at most %d characters, got %q", param, maxMetadataKey, k)
		}
		if utf8.RuneCountInString(v) > maxMetadataValue {
			return Invalid(param+"."+k, "%s.%s may be at most %d characters", param, k, maxMetadataValue)
		}
	}
	return nil
}

// checkStops reports more than 16 stop strings or an empty one.
func checkStops(param string, stops []string) error {
	if len(stops) > maxStops {
		return Invalid(param, "%s may hold at most %d strings, got %d", param, maxStops, len(stops))
	}
	for i, s := range stops {
		if s == "" {
			return Invalid(fmt.Sprintf("%s[%d]", param, i), "%s[%d] must not be empty", param, i)
		}
	}
	return nil
}

// normEffort checks a reasoning effort and returns its canonical value:
// "minimal", which OpenAI SDKs may send, is "low".
func normEffort(param, v string) (string, error) {
	switch v {
	case "none", "low", "medium", "high":
		return v, nil
	case "minimal":
		return "low", nil
	}
	return "", Invalid(param, "%s must be one of none, low, medium, high; got %q", param, v)
}

// checkVerbosity checks a verbosity: low, medium, high or absent.
func checkVerbosity(param, v string) (string, error) {
	switch v {
	case "", "low", "medium", "high":
		return v, nil
	}
	return "", Invalid(param, "%s must be low, medium or high, got %q", param, v)
}

// checkSummary checks a reasoning summary.
func checkSummary(param, v string) error {
	switch v {
	case "", "none", "auto", "concise", "detailed":
		return nil
	}
	return Invalid(param, "%s must be one of none, auto, concise, detailed; got %q", param, v)
}

// imagePart returns the part of an image given as a data: URL (its
// bytes), or as an http or https URL (the URL, which the server fetches,
// or refuses, before the engine sees the request).
func imagePart(param, raw string) (inference.Part, error) {
	if raw == "" {
		return inference.Part{}, Missing(param)
	}
	if !strings.HasPrefix(raw, "data:") {
		return remoteImage(param, raw)
	}
	meta, data, ok := strings.Cut(strings.TrimPrefix(raw, "data:"), ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return inference.Part{}, Invalid(param, "%s must be a base64 data: URL", param)
	}
	img, err := decodeBase64(param, data)
	return inference.Part{Image: img}, err
}

// MaxImageURLBytes is the longest image URL a request may name.
const MaxImageURLBytes = 2048

// remoteImage checks an image's http or https URL and returns the part
// that names it, for the server to fetch.
func remoteImage(param, raw string) (inference.Part, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return inference.Part{}, Invalid(param, "%s must be a data: URL or an http or https URL", param)
	case len(raw) > MaxImageURLBytes:
		return inference.Part{}, Invalid(param, "%s is %d bytes long, at most %d", param, len(raw), MaxImageURLBytes)
	}
	return inference.Part{URL: raw}, nil
}

// decodeBase64 decodes standard base64, padded or not.
func decodeBase64(param, data string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(data, "="))
	}
	if err != nil {
		return nil, Invalid(param, "%s is not valid base64", param)
	}
	return b, nil
}

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

// imageURL is how a request names the image of a part: a data: URL of
// its bytes, or the URL it was named by, not yet fetched.
func imageURL(p inference.Part) string {
	if p.Image == nil {
		return p.URL
	}
	return dataURL(p.Image)
}

// dataURL returns an image as a base64 data: URL with its sniffed type.
func dataURL(img []byte) string {
	return "data:" + http.DetectContentType(img) + ";base64," + base64.StdEncoding.EncodeToString(img)
}

// mediaType sniffs an image's MIME type.
func mediaType(img []byte) string { return http.DetectContentType(img) }

// base64Std encodes with standard padded base64.
func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
