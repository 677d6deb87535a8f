package jinja

import (
	"fmt"
	"iter"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Values inside the engine are Go values of these types, mirroring Python:
//
//	nil            None
//	bool           bool
//	int64          int
//	float64        float
//	string         str
//	[]any          list
//	tuple          tuple
//	*Map           dict (insertion ordered)
//	*undefined     jinja2.Undefined
//	*namespace     jinja2 namespace()
//	*generator     a one-shot iterator (select, map, reverse, ...)
//	*dictView      dict.items()/keys()/values()
//	*loopObj       the loop variable
//	*macro         a macro or the caller of a call block
//	*callable      a builtin function or a bound method
//	Func           a function passed in by the caller

// Func is a function a caller passes to Render as a variable, such as
// "strftime_now" to fix the clock. The template calls it with positional
// arguments only (keyword arguments are an error); the arguments are nil,
// bool, int64, float64, string, []any (lists and tuples) or *Map, and the
// result may be any value Render accepts. A returned error stops the render
// and is returned by Render. Render calls it on its own goroutine, so a Func
// shared by concurrent Renders must be safe for concurrent use.
type Func = func(args ...any) (any, error)

type tuple []any

// Map is an insertion-ordered mapping, the counterpart of a Python dict: it
// iterates, renders and serializes (tojson) in the order keys were first
// set. Use it for values whose key order matters, such as tool JSON
// schemas; ParseJSON returns Maps for JSON objects.
//
// A Map must not be modified while a Render that uses it runs; any number
// of concurrent Renders may read the same Map.
type Map struct {
	keys  []any
	vals  []any
	index map[hashKey]int
}

// NewMap returns an empty Map.
func NewMap() *Map { return &Map{index: map[hashKey]int{}} }

// Set sets key to value, keeping the key's position if it already exists.
// The value may be any type that Render accepts.
func (m *Map) Set(key string, value any) { m.set(key, value) }

// Get returns the value stored under key.
func (m *Map) Get(key string) (any, bool) { return m.get(key) }

// Len returns the number of keys.
func (m *Map) Len() int { return len(m.keys) }

// All iterates over the keys and values in insertion order.
func (m *Map) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		for i, k := range m.keys {
			ks, ok := k.(string)
			if !ok {
				ks = toStr(k)
			}
			if !yield(ks, m.vals[i]) {
				return
			}
		}
	}
}

// MarshalJSON encodes the Map as a JSON object in insertion order.
func (m *Map) MarshalJSON() ([]byte, error) {
	v, err := normalize(m, 0)
	if err != nil {
		return nil, err
	}
	s, err := dumpJSON(v, jsonOptions{itemSep: ",", keySep: ":"})
	return []byte(s), err
}

func (m *Map) set(key, value any) {
	if m.index == nil {
		m.index = map[hashKey]int{}
	}
	h, _ := hashOf(key)
	if i, ok := m.index[h]; ok {
		m.vals[i] = value
		return
	}
	m.index[h] = len(m.keys)
	m.keys = append(m.keys, key)
	m.vals = append(m.vals, value)
}

func (m *Map) get(key any) (any, bool) {
	h, ok := hashOf(key)
	if !ok || m.index == nil {
		return nil, false
	}
	i, ok := m.index[h]
	if !ok {
		return nil, false
	}
	return m.vals[i], true
}

func (m *Map) copy() *Map {
	c := NewMap()
	for i, k := range m.keys {
		c.set(k, m.vals[i])
	}
	return c
}

// hashKey identifies a dict key with Python's equality: 1, 1.0 and True are
// the same key.
type hashKey struct {
	kind byte
	s    string
	n    int64
	f    float64
}

func hashOf(v any) (hashKey, bool) {
	switch v := v.(type) {
	case nil:
		return hashKey{kind: 'n'}, true
	case string:
		return hashKey{kind: 's', s: v}, true
	case bool:
		if v {
			return hashKey{kind: 'i', n: 1}, true
		}
		return hashKey{kind: 'i'}, true
	case int64:
		return hashKey{kind: 'i', n: v}, true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<62 {
			return hashKey{kind: 'i', n: int64(v)}, true
		}
		return hashKey{kind: 'f', f: v}, true
	case tuple:
		var b strings.Builder
		for _, it := range v {
			h, ok := hashOf(it)
			if !ok {
				return hashKey{}, false
			}
			fmt.Fprintf(&b, "%c%q%d%v;", h.kind, h.s, h.n, h.f)
		}
		return hashKey{kind: 't', s: b.String()}, true
	}
	return hashKey{}, false
}

// undefined is jinja2's default Undefined: it renders empty, is falsy and
// iterates as empty, and fails on most other uses.
type undefined struct {
	name   string
	obj    any
	hasObj bool
	hint   string
}

func (u *undefined) message() string {
	switch {
	case u.hint != "":
		return u.hint
	case !u.hasObj:
		return fmt.Sprintf("'%s' is undefined", u.name)
	}
	return fmt.Sprintf("%s has no attribute %s", pyRepr(typeName(u.obj)+" object"), pyRepr(u.name))
}

func (u *undefined) fail() error { return &Error{Message: u.message()} }

func undefinedAttr(obj any, name string) *undefined {
	return &undefined{name: name, obj: obj, hasObj: true}
}

type namespace struct{ attrs *Map }

// generator is a one-shot iterator, as returned by Python generators.
// Like Python's, it fails only when iterated: err is the error its body
// would raise.
type generator struct {
	kind  string
	items []any
	pos   int
	err   error
}

// lazy runs a generator's body now but keeps its error for the first
// iteration, as Python reports it only then.
func lazy(kind string, body func() ([]any, error)) *generator {
	items, err := body()
	return &generator{kind: kind, items: items, err: err}
}

func (g *generator) drain() ([]any, error) {
	if g.err != nil {
		err := g.err
		g.err = nil
		g.pos = len(g.items)
		return nil, err
	}
	rest := g.items[g.pos:]
	g.pos = len(g.items)
	return rest, nil
}

// dictView is the result of dict.items(), keys() or values().
type dictView struct {
	kind  string // "items", "keys", "values"
	items []any
}

// callable is a builtin function or a bound method.
type callable struct {
	name string
	fn   func(r *renderer, args []any, kwargs *Map) (any, error)
}

// typeName returns the Python type name of v, as used in messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case tuple:
		return "tuple"
	case *Map:
		return "dict"
	case *undefined:
		return "Undefined"
	case *namespace:
		return "Namespace"
	case *generator:
		return "generator"
	case *dictView:
		return "dict_" + v.(*dictView).kind
	case *loopObj:
		return "LoopContext"
	case *macro:
		return "Macro"
	}
	return "function"
}

// normalize converts a caller's value into the engine's representation.
func normalize(v any, depth int) (any, error) {
	if depth > 100 {
		return nil, &Error{Message: "value nests too deeply (or contains itself)"}
	}
	switch x := v.(type) {
	case nil, bool, int64, float64, string, tuple, *undefined, *namespace, *callable, *macro:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return float64(x), nil
		}
		return int64(x), nil
	case float32:
		return float64(x), nil
	case Func:
		return x, nil
	case []any:
		out := make([]any, len(x))
		for i, it := range x {
			n, err := normalize(it, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case *Map:
		if x == nil {
			return nil, nil
		}
		out := NewMap()
		for i, k := range x.keys {
			n, err := normalize(x.vals[i], depth+1)
			if err != nil {
				return nil, err
			}
			out.set(k, n)
		}
		return out, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := NewMap()
		for _, k := range keys {
			n, err := normalize(x[k], depth+1)
			if err != nil {
				return nil, err
			}
			out.set(k, n)
		}
		return out, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil, nil
		}
		return normalize(rv.Elem().Interface(), depth+1)
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			n, err := normalize(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		m := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			m[it.Key().String()] = it.Value().Interface()
		}
		return normalize(m, depth)
	case reflect.String:
		return rv.String(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	}
	return nil, &Error{Message: fmt.Sprintf("jinja: unsupported value of type %T", v)}
}

// truthy is Python's bool().
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case tuple:
		return len(x) > 0
	case *Map:
		return x.Len() > 0
	case *undefined:
		return false
	case *dictView:
		return len(x.items) > 0
	}
	return true
}

// toStr is Python's str() of a value, as {{ }} prints it.
func toStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case *undefined:
		return ""
	}
	var b strings.Builder
	writeRepr(&b, v, false, 0)
	return b.String()
}

// repr is Python's repr().
func repr(v any) string {
	var b strings.Builder
	writeRepr(&b, v, true, 0)
	return b.String()
}

func writeRepr(b *strings.Builder, v any, quote bool, depth int) {
	if depth > 100 {
		b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(formatFloat(x))
	case string:
		if quote {
			b.WriteString(pyRepr(x))
		} else {
			b.WriteString(x)
		}
	case []any:
		b.WriteByte('[')
		for i, it := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it, true, depth+1)
		}
		b.WriteByte(']')
	case tuple:
		b.WriteByte('(')
		for i, it := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it, true, depth+1)
		}
		if len(x) == 1 {
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case *Map:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, k, true, depth+1)
			b.WriteString(": ")
			writeRepr(b, x.vals[i], true, depth+1)
		}
		b.WriteByte('}')
	case *undefined:
		if quote {
			b.WriteString("Undefined")
		}
	case *namespace:
		b.WriteString("<Namespace ")
		writeRepr(b, x.attrs, true, depth+1)
		b.WriteByte('>')
	case *dictView:
		b.WriteString("dict_" + x.kind + "(")
		writeRepr(b, x.items, true, depth+1)
		b.WriteByte(')')
	case *generator:
		fmt.Fprintf(b, "<generator object %s at 0x7f0000000000>", x.kind)
	case *macro:
		fmt.Fprintf(b, "<Macro '%s'>", x.name)
	case *loopObj:
		fmt.Fprintf(b, "<LoopContext %d/%d>", x.index+1, len(x.items))
	case *callable:
		fmt.Fprintf(b, "<built-in method %s>", x.name)
	default:
		b.WriteString("<function>")
	}
}

// pyRepr quotes a string the way Python's repr() does.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case isPrintable(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// formatFloat is Python's repr() of a float.
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	mant, expPart, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expPart)
	digits := strings.Replace(mant, ".", "", 1)
	if exp >= -4 && exp < 16 {
		if exp >= 0 {
			if len(digits) <= exp+1 {
				return sign + digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
			}
			return sign + digits[:exp+1] + "." + digits[exp+1:]
		}
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	out := sign + digits[:1]
	if len(digits) > 1 {
		out += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es, exp = "-", -exp
	}
	e := strconv.Itoa(exp)
	if len(e) < 2 {
		e = "0" + e
	}
	return out + "e" + es + e
}

// iterate returns the items a for loop would visit, or an error when v is
// not iterable. Generators are consumed.
func iterate(v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case tuple:
		return x, nil
	case string:
		out := make([]any, 0, len(x))
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, nil
	case *Map:
		return slices.Clone(x.keys), nil
	case *undefined:
		return nil, nil
	case *generator:
		return x.drain()
	case *dictView:
		return x.items, nil
	}
	return nil, &Error{Message: fmt.Sprintf("'%s' object is not iterable", typeName(v))}
}

// isNumber reports whether v is an int, float or bool (a Python Number).
func isNumber(v any) bool {
	switch v.(type) {
	case bool, int64, float64:
		return true
	}
	return false
}

// asInt returns v as an int64 when it is an int or a bool.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	if n, ok := asInt(v); ok {
		return float64(n), true
	}
	f, ok := v.(float64)
	return f, ok
}

// equal is Python's ==.
func equal(a, b any) bool { return equalDepth(a, b, 0) }

func equalDepth(a, b any, depth int) bool {
	if depth > 100 {
		return false
	}
	if isNumber(a) && isNumber(b) {
		ai, aok := asInt(a)
		bi, bok := asInt(b)
		if aok && bok {
			return ai == bi
		}
		af, _ := asFloat(a)
		bf, _ := asFloat(b)
		return af == bf
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && equalSlices(x, y, depth)
	case tuple:
		y, ok := b.(tuple)
		return ok && equalSlices(x, y, depth)
	case *Map:
		y, ok := b.(*Map)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.keys {
			w, ok := y.get(k)
			if !ok || !equalDepth(x.vals[i], w, depth+1) {
				return false
			}
		}
		return true
	case *undefined:
		_, ok := b.(*undefined)
		return ok
	case *dictView:
		y, ok := b.(*dictView)
		return ok && x == y
	}
	return sameObject(a, b)
}

func equalSlices(x, y []any, depth int) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !equalDepth(x[i], y[i], depth+1) {
			return false
		}
	}
	return true
}

// sameObject is Python's "is" for reference types.
func sameObject(a, b any) bool {
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	if ra.Kind() != rb.Kind() {
		return false
	}
	switch ra.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice:
		return ra.Pointer() == rb.Pointer()
	}
	return false
}

// compare orders a and b as Python's < does: -1, 0 or 1, or an error for
// types that do not order.
func compare(a, b any) (int, error) {
	if isNumber(a) && isNumber(b) {
		ai, aok := asInt(a)
		bi, bok := asInt(b)
		if aok && bok {
			return cmpOrdered(ai, bi), nil
		}
		af, _ := asFloat(a)
		bf, _ := asFloat(b)
		if math.IsNaN(af) || math.IsNaN(bf) {
			return 2, nil // unordered: every comparison is false
		}
		return cmpOrdered(af, bf), nil
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case []any:
		if y, ok := b.([]any); ok {
			return compareSlices(x, y)
		}
	case tuple:
		if y, ok := b.(tuple); ok {
			return compareSlices(x, y)
		}
	}
	return 0, &Error{Message: fmt.Sprintf("'<' not supported between instances of '%s' and '%s'", typeName(a), typeName(b))}
}

func cmpOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareSlices(x, y []any) (int, error) {
	for i := 0; i < len(x) && i < len(y); i++ {
		if equal(x[i], y[i]) {
			continue
		}
		return compare(x[i], y[i])
	}
	return cmpOrdered(int64(len(x)), int64(len(y))), nil
}

// contains is Python's "item in container".
func contains(container, item any) (bool, error) {
	switch c := container.(type) {
	case string:
		s, ok := item.(string)
		if !ok {
			return false, &Error{Message: fmt.Sprintf("'in <string>' requires string as left operand, not %s", typeName(item))}
		}
		return strings.Contains(c, s), nil
	case *Map:
		if _, ok := hashOf(item); !ok {
			return false, &Error{Message: fmt.Sprintf("unhashable type: '%s'", typeName(item))}
		}
		_, ok := c.get(item)
		return ok, nil
	case *undefined:
		return false, nil
	}
	items, err := iterate(container)
	if err != nil {
		return false, &Error{Message: fmt.Sprintf("argument of type '%s' is not iterable", typeName(container))}
	}
	for _, it := range items {
		if equal(it, item) {
			return true, nil
		}
	}
	return false, nil
}

// length is Python's len().
func length(v any) (int, error) {
	switch x := v.(type) {
	case string:
		return runeCount(x), nil
	case []any:
		return len(x), nil
	case tuple:
		return len(x), nil
	case *Map:
		return x.Len(), nil
	case *undefined:
		return 0, nil
	case *dictView:
		return len(x.items), nil
	case *namespace:
		return 0, &Error{Message: "object of type 'Namespace' has no len()"}
	}
	return 0, &Error{Message: fmt.Sprintf("object of type '%s' has no len()", typeName(v))}
}

func runeCount(s string) int {
	n := 0
	for range s {
		n++
	}
	return n
}
