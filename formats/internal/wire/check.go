package wire

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
)

// Limits of the spec and of the common SDK parameters.
const (
	maxMetadataPairs = 16
	maxMetadataKey   = 64
	maxMetadataValue = 512
	MaxStops         = 16
)

// ToolNamePattern is what a function name may be: 1 to 64 characters of
// a-z, A-Z, 0-9, underscore and dash.
var ToolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// CheckRange reports a number outside lo..hi.
func CheckRange(param string, v *float64, lo, hi float64) error {
	if v != nil && (*v < lo || *v > hi) {
		return formats.Invalid(param, "%s must be between %g and %g, got %g", param, lo, hi, *v)
	}
	return nil
}

// CheckMin reports an integer below lo.
func CheckMin(param string, v *int, lo int) error {
	if v != nil && *v < lo {
		return formats.Invalid(param, "%s must be at least %d, got %d", param, lo, *v)
	}
	return nil
}

// CheckToolName reports a function name outside [a-zA-Z0-9_-]{1,64}.
func CheckToolName(param, name string) error {
	if name == "" {
		return formats.Missing(param)
	}
	if !ToolNamePattern.MatchString(name) {
		return formats.Invalid(param, "%s must be 1 to 64 characters of a-z, A-Z, 0-9, underscore and dash, got %q", param, name)
	}
	return nil
}

// CheckSchema reports a JSON Schema that is present but not an object.
func CheckSchema(param string, raw json.RawMessage) error {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" || strings.HasPrefix(s, "{") {
		return nil
	}
	return formats.Invalid(param, "%s must be a JSON Schema object", param)
}

// CheckMetadata applies the spec's limits: 16 pairs, keys up to 64 and
// values up to 512 characters.
func CheckMetadata(param string, m map[string]string) error {
	if len(m) > maxMetadataPairs {
		return formats.Invalid(param, "%s may hold at most %d pairs, got %d", param, maxMetadataPairs, len(m))
	}
	for k, v := range m {
		if utf8.RuneCountInString(k) > maxMetadataKey {
			return formats.Invalid(param, "%s keys may be at most %d characters, got %q", param, maxMetadataKey, k)
		}
		if utf8.RuneCountInString(v) > maxMetadataValue {
			return formats.Invalid(param+"."+k, "%s.%s may be at most %d characters", param, k, maxMetadataValue)
		}
	}
	return nil
}

// CheckStops reports more than 16 stop strings or an empty one.
func CheckStops(param string, stops []string) error {
	if len(stops) > MaxStops {
		return formats.Invalid(param, "%s may hold at most %d strings, got %d", param, MaxStops, len(stops))
	}
	for i, s := range stops {
		if s == "" {
			return formats.Invalid(fmt.Sprintf("%s[%d]", param, i), "%s[%d] must not be empty", param, i)
		}
	}
	return nil
}

// NormEffort checks a reasoning effort and returns its canonical value:
// "minimal", which OpenAI SDKs may send, is "low".
func NormEffort(param, v string) (string, error) {
	switch v {
	case "none", "low", "medium", "high":
		return v, nil
	case "minimal":
		return "low", nil
	}
	return "", formats.Invalid(param, "%s must be one of none, low, medium, high; got %q", param, v)
}

// CheckVerbosity checks a verbosity: low, medium, high or absent.
func CheckVerbosity(param, v string) (string, error) {
	switch v {
	case "", "low", "medium", "high":
		return v, nil
	}
	return "", formats.Invalid(param, "%s must be low, medium or high, got %q", param, v)
}

// CheckSummary checks a reasoning summary.
func CheckSummary(param, v string) error {
	switch v {
	case "", "none", "auto", "concise", "detailed":
		return nil
	}
	return formats.Invalid(param, "%s must be one of none, auto, concise, detailed; got %q", param, v)
}

// ImagePart returns the part of an image given as a data: URL (its
// bytes), or as an http or https URL (the URL, which the server fetches,
// or refuses, before the engine sees the request).
func ImagePart(param, raw string) (inference.Part, error) {
	if raw == "" {
		return inference.Part{}, formats.Missing(param)
	}
	if !strings.HasPrefix(raw, "data:") {
		return RemoteImage(param, raw)
	}
	meta, data, ok := strings.Cut(strings.TrimPrefix(raw, "data:"), ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return inference.Part{}, formats.Invalid(param, "%s must be a base64 data: URL", param)
	}
	img, err := DecodeBase64(param, data)
	return inference.Part{Image: img}, err
}

// MaxImageURLBytes is the longest image URL a request may name.
const MaxImageURLBytes = 2048

// RemoteImage checks an image's http or https URL and returns the part
// that names it, for the server to fetch.
func RemoteImage(param, raw string) (inference.Part, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return inference.Part{}, formats.Invalid(param, "%s must be a data: URL or an http or https URL", param)
	case len(raw) > MaxImageURLBytes:
		return inference.Part{}, formats.Invalid(param, "%s is %d bytes long, at most %d", param, len(raw), MaxImageURLBytes)
	}
	return inference.Part{URL: raw}, nil
}

// DecodeBase64 decodes standard base64, padded or not.
func DecodeBase64(param, data string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(data, "="))
	}
	if err != nil {
		return nil, formats.Invalid(param, "%s is not valid base64", param)
	}
	return b, nil
}

// ImageURL is how a request names the image of a part: a data: URL of
// its bytes, or the URL it was named by, not yet fetched.
func ImageURL(p inference.Part) string {
	if p.Image == nil {
		return p.URL
	}
	return dataURL(p.Image)
}

// dataURL returns an image as a base64 data: URL with its sniffed type.
func dataURL(img []byte) string {
	return "data:" + http.DetectContentType(img) + ";base64," + base64.StdEncoding.EncodeToString(img)
}

// MediaType sniffs an image's MIME type.
func MediaType(img []byte) string { return http.DetectContentType(img) }

// Base64Std encodes with standard padded base64.
func Base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// CheckToolChoice validates a canonical tool choice.
func CheckToolChoice(param string, c formats.ToolChoice, tools []inference.Tool) (formats.ToolChoice, error) {
	switch c.Mode {
	case "none", "auto":
		return formats.ToolChoice{Mode: c.Mode}, nil
	case "required":
		if len(tools) == 0 {
			return c, formats.Invalid(param, "%s %q needs tools", param, c.Mode)
		}
		return formats.ToolChoice{Mode: c.Mode}, nil
	case "function":
		if err := CheckToolName(param+".name", c.Name); err != nil {
			return c, err
		}
		if !slices.ContainsFunc(tools, func(t inference.Tool) bool { return t.Name == c.Name }) {
			return c, formats.Invalid(param, "%s names %q, which is not among the tools", param, c.Name)
		}
		return c, nil
	}
	return c, formats.Invalid(param, "%s must be none, auto, required or a function, got %q", param, c.Mode)
}
