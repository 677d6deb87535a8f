package jinja

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseJSON decodes JSON into values for Render, keeping the key order of
// objects: objects become *Map, arrays []any, integers int64 (when they fit,
// else float64), other numbers float64, like Python's json.loads. It is safe
// for concurrent use.
func ParseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeJSON(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("jinja: ParseJSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("jinja: ParseJSON: trailing data after JSON value")
	}
	return v, nil
}

func decodeJSON(dec *json.Decoder, depth int) (any, error) {
	if depth > 1000 {
		return nil, fmt.Errorf("JSON nests too deeply")
	}
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := NewMap()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				v, err := decodeJSON(dec, depth+1)
				if err != nil {
					return nil, err
				}
				m.set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return m, nil
		case '[':
			out := []any{}
			for dec.More() {
				v, err := decodeJSON(dec, depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return out, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		s := t.String()
		if !strings.ContainsAny(s, ".eE") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, nil
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !isRangeErr(err) {
			return nil, err
		}
		return f, nil
	}
	return t, nil // nil, bool, string
}

// jsonOptions are the arguments of Python's json.dumps that tojson passes.
type jsonOptions struct {
	ensureASCII bool
	sortKeys    bool
	pretty      bool   // indent is not None
	indent      string // one level of indentation
	itemSep     string
	keySep      string
}

// dumpJSON is Python's json.dumps.
func dumpJSON(v any, opts jsonOptions) (string, error) {
	var b strings.Builder
	if err := writeJSON(&b, v, opts, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeJSON(b *strings.Builder, v any, o jsonOptions, level int) error {
	if level > 200 {
		return &Error{Message: "Circular reference detected"}
	}
	if b.Len() > maxOutputSize {
		return &Error{Message: "JSON output too large"}
	}
	newline := func(l int) {
		if o.pretty {
			b.WriteByte('\n')
			for range l {
				b.WriteString(o.indent)
			}
		}
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(jsonFloat(x))
	case string:
		writeJSONString(b, x, o.ensureASCII)
	case []any, tuple:
		var items []any
		if t, ok := x.(tuple); ok {
			items = t
		} else {
			items = x.([]any)
		}
		if len(items) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			newline(level + 1)
			if err := writeJSON(b, it, o, level+1); err != nil {
				return err
			}
		}
		newline(level)
		b.WriteByte(']')
	case *Map:
		if x.Len() == 0 {
			b.WriteString("{}")
			return nil
		}
		type kv struct {
			key string
			val any
		}
		pairs := make([]kv, 0, x.Len())
		for i, k := range x.keys {
			var ks string
			switch k := k.(type) {
			case string:
				ks = k
			case float64:
				ks = jsonFloat(k)
			case bool:
				ks = strconv.FormatBool(k)
			case int64:
				ks = strconv.FormatInt(k, 10)
			case nil:
				ks = "null"
			default:
				return &Error{Message: fmt.Sprintf("keys must be str, int, float, bool or None, not %s", typeName(k))}
			}
			pairs = append(pairs, kv{ks, x.vals[i]})
		}
		if o.sortKeys {
			slices.SortStableFunc(pairs, func(a, b kv) int { return strings.Compare(a.key, b.key) })
		}
		b.WriteByte('{')
		for i, p := range pairs {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			newline(level + 1)
			writeJSONString(b, p.key, o.ensureASCII)
			b.WriteString(o.keySep)
			if err := writeJSON(b, p.val, o, level+1); err != nil {
				return err
			}
		}
		newline(level)
		b.WriteByte('}')
	default:
		return &Error{Message: fmt.Sprintf("Object of type %s is not JSON serializable", typeName(v))}
	}
	return nil
}

func jsonFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return formatFloat(f)
}

// writeJSONString quotes s as Python's json module does.
func writeJSONString(b *strings.Builder, s string, ensureASCII bool) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20:
				fmt.Fprintf(b, `\u%04x`, r)
			case ensureASCII && r > 0x7e:
				if r >= 0x10000 {
					r -= 0x10000
					fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
				} else {
					fmt.Fprintf(b, `\u%04x`, r)
				}
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
