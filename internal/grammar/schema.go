package grammar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds on the JSON Schemas CheckSchema accepts, and on the GBNF grammars
// Check accepts. llama.cpp's JSON Schema converter recurses
// once per nesting level, builds rule names that grow with the depth, and
// can take time cubic in the number of optional properties of an object; its
// GBNF parser recurses once per parenthesis and copies the item of a {m,n}
// repetition up to m times. A crash or a runaway allocation there is the
// host process's, so inputs are measured before they reach C.
const (
	// MaxSchemaBytes bounds the size of a JSON Schema, counted without
	// insignificant whitespace. A tool's parameters and a response format
	// are each one schema; a call that requires a tool converts the
	// parameters of all the tools offered as one schema.
	MaxSchemaBytes = 64 << 10

	// MaxSchemaDepth bounds the nesting of a JSON Schema's objects and
	// arrays. 64 levels hold about 30 levels of nested objects: OpenAI's
	// structured outputs allow 10. Counted through "$ref", where the
	// subschema a reference names counts as nested where it is used, the
	// bound is 4·MaxSchemaDepth.
	MaxSchemaDepth = 64

	// MaxBytes bounds a GBNF grammar's text, whether written by the
	// caller or converted from a JSON Schema.
	MaxBytes = 1 << 20
)

const (
	// maxRepeat is llama.cpp's MAX_REPETITION_THRESHOLD: its GBNF parser
	// refuses {m,n} with m or n above it. Schemas are held to it for
	// minItems, maxItems, minLength, maxLength and {m,n} in patterns.
	maxRepeat = 2000
	// maxKeyBytes bounds every object key of a schema. A property name
	// becomes part of rule names, which the converter runs through a
	// std::regex that recurses once per punctuation byte in a row (100,000
	// overflow the stack), and with additionalProperties it becomes a trie
	// that the converter walks recursively, one level per byte.
	maxKeyBytes = 256
	// maxRefBytes bounds a "$ref", whose fragment goes through the same
	// std::regex.
	maxRefBytes = 1024
	// maxRawSchemaBytes bounds a schema with its whitespace.
	maxRawSchemaBytes = 16 * MaxSchemaBytes
	// schemaBudget bounds the converter's estimated work, in units of about
	// a nanosecond on a current x86 core (see estimator).
	schemaBudget = 500_000_000
)

// CheckSchema returns an error if llama.cpp's JSON Schema converter could
// crash, hang or run away on schema: if it is over MaxSchemaBytes or
// MaxSchemaDepth, if minItems, maxItems, minLength, maxLength or a
// pattern's {m,n} is over 2000 (llama.cpp's limit on repetitions) or has
// its minimum over its maximum, if an integer's bounds leave the range of
// int64, if a pattern is one the converter crashes or hangs on (nothing
// before a quantifier, as in "(?:", or a stray ']' or '}'), if a "$ref" is
// not local, does not resolve or leads back to itself, or if the
// conversion would cost more than about half a second (many optional
// properties in one object, long property names nested deep, type lists
// nested in type lists). A backend's conversion refuses what it refuses
// before calling C. It calls no C, takes a few milliseconds at most, and
// is safe for concurrent use. Tool parameter schemas, which the inference
// package converts only when a call is required, can be checked with it
// when the request arrives, under the same bounds as response formats.
//
// Its error wraps ErrInvalid and names the first problem found, as in
// "schema nests deeper than 64 levels" or "minItems 100000 is over 2000".
// A schema it accepts may still be one the converter refuses (an
// unsupported keyword or format), or whose grammar Check would refuse;
// the conversion says so.
func CheckSchema(schema []byte) error {
	_, err := CompactSchema(schema)
	return err
}

// CompactSchema checks schema as CheckSchema does and returns it without
// insignificant whitespace, the form a converter should be given: the
// bounds were measured on it. It is safe for concurrent use.
func CompactSchema(schema []byte) ([]byte, error) {
	if len(schema) > maxRawSchemaBytes {
		return nil, schemaErr("schema is %d bytes, over %d", len(schema), maxRawSchemaBytes)
	}
	if !utf8.Valid(schema) {
		return nil, schemaErr("the schema is not valid UTF-8")
	}
	if tooDeep(schema) {
		return nil, schemaErr("schema nests deeper than %d levels", MaxSchemaDepth)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, schema); err != nil {
		return nil, schemaErr("the schema is not valid JSON: %v", err)
	}
	if compact.Len() > MaxSchemaBytes {
		return nil, schemaErr("schema is %d bytes without whitespace, over %d", compact.Len(), MaxSchemaBytes)
	}
	root, err := parseTree(compact.Bytes())
	if err != nil {
		return nil, err
	}
	c := &schemaChecker{root: root, refs: map[string]*jnode{}}
	if err := c.scan(root); err != nil {
		return nil, err
	}
	if err := c.refCycles(); err != nil {
		return nil, err
	}
	if err := estimate(root, c.refs, c.refCost); err != nil {
		return nil, err
	}
	return compact.Bytes(), nil
}

// tooDeep reports whether the brackets of a JSON text, outside its
// strings, nest deeper than MaxSchemaDepth.
func tooDeep(data []byte) bool {
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if depth++; depth > MaxSchemaDepth {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

func schemaErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// A jnode is a JSON value of a schema, with objects in their order and
// duplicate keys resolved as nlohmann::ordered_json does: the last value
// takes the first one's place.
type jnode struct {
	kind  jkind
	s     string // a string, or a number's text
	keys  []string
	vals  []*jnode // an object's values (keys[i]: vals[i]) or an array's elements
	index map[string]int
	size  int // about the bytes of its JSON text
}

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNum
	jStr
	jArr
	jObj
)

// get returns the value of key k of an object, or nil.
func (n *jnode) get(k string) *jnode {
	if n == nil || n.kind != jObj {
		return nil
	}
	if i, ok := n.find(k); ok {
		return n.vals[i]
	}
	return nil
}

func (n *jnode) has(k string) bool { return n.get(k) != nil }

func (n *jnode) find(k string) (int, bool) {
	if n.index != nil {
		i, ok := n.index[k]
		return i, ok
	}
	for i, kk := range n.keys {
		if kk == k {
			return i, true
		}
	}
	return 0, false
}

func (n *jnode) set(k string, v *jnode) {
	if i, ok := n.find(k); ok {
		n.vals[i] = v
		return
	}
	n.keys = append(n.keys, k)
	n.vals = append(n.vals, v)
	switch {
	case n.index != nil:
		n.index[k] = len(n.keys) - 1
	case len(n.keys) > 16:
		n.index = make(map[string]int, 2*len(n.keys))
		for i, kk := range n.keys {
			n.index[kk] = i
		}
	}
}

func (n *jnode) isStr(s string) bool { return n != nil && n.kind == jStr && n.s == s }

// elems returns what nlohmann iterates over in a range-for: an array's
// elements, an object's values, or the value itself.
func (n *jnode) elems() []*jnode {
	if n.kind == jArr || n.kind == jObj {
		return n.vals
	}
	return []*jnode{n}
}

// parseTree builds the tree of a compact JSON text, refusing it if it nests
// deeper than MaxSchemaDepth or has an overlong key. It keeps its own stack,
// so the depth of the input costs no recursion.
func parseTree(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		n       *jnode
		key     string
		wantKey bool
	}
	var (
		stack []frame
		root  *jnode
	)
	attach := func(v *jnode) {
		if len(stack) == 0 {
			root = v
			return
		}
		f := &stack[len(stack)-1]
		f.n.size += v.size + 1 // the comma, or the closing bracket
		if f.n.kind == jObj {
			f.n.size += len(f.key) + 3
			f.n.set(f.key, v)
			f.wantKey = true
		} else {
			f.n.vals = append(f.n.vals, v)
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, schemaErr("the schema is not valid JSON: %v", err)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			n := stack[len(stack)-1].n
			stack = stack[:len(stack)-1]
			attach(n)
			continue
		}
		if len(stack) > 0 && stack[len(stack)-1].wantKey {
			k := tok.(string)
			if len(k) > maxKeyBytes {
				return nil, schemaErr("schema has a key of %d bytes, over %d: %.40q…", len(k), maxKeyBytes, k)
			}
			stack[len(stack)-1].key, stack[len(stack)-1].wantKey = k, false
			continue
		}
		switch t := tok.(type) {
		case json.Delim:
			if len(stack) >= MaxSchemaDepth {
				return nil, schemaErr("schema nests deeper than %d levels", MaxSchemaDepth)
			}
			n := &jnode{kind: jArr, size: 1}
			if t == '{' {
				n.kind = jObj
			}
			stack = append(stack, frame{n: n, wantKey: t == '{'})
		case string:
			attach(&jnode{kind: jStr, s: t, size: len(t) + 2})
		case json.Number:
			attach(&jnode{kind: jNum, s: string(t), size: len(t)})
		case bool:
			attach(&jnode{kind: jBool, s: strconv.FormatBool(t), size: 5})
		case nil:
			attach(&jnode{kind: jNull, size: 4})
		}
	}
	if root == nil || len(stack) > 0 {
		return nil, schemaErr("the schema is not valid JSON")
	}
	return root, nil
}

// schemaChecker checks, in every object of a schema whatever its place,
// the keywords whose values llama.cpp's converter turns into C++ integers,
// repetition counts or regular expression parsing, and the "$ref"s it
// resolves: a "$ref" may point anywhere in the document, so any object may
// be read as a schema.
type schemaChecker struct {
	root    *jnode
	refs    map[string]*jnode // resolved "$ref"s
	refCost int64             // the copies the converter makes to resolve them
}

func (c *schemaChecker) scan(n *jnode) error {
	if n.kind == jObj {
		if err := c.object(n); err != nil {
			return err
		}
	}
	for _, v := range n.vals {
		if err := c.scan(v); err != nil {
			return err
		}
	}
	return nil
}

func (c *schemaChecker) object(n *jnode) error {
	for _, pair := range [][2]string{{"minItems", "maxItems"}, {"minLength", "maxLength"}} {
		var bound [2]int64
		for i, k := range pair {
			bound[i] = -1
			v := n.get(k)
			if v == nil || v.kind != jNum {
				continue // not a number: the converter refuses it
			}
			x, ok := wholeNumber(v.s)
			switch {
			case !ok:
				return schemaErr("%s %s is not a whole number", k, v.s)
			case x < 0:
				return schemaErr("%s %s is negative", k, v.s)
			case x > maxRepeat:
				return schemaErr("%s %s is over %d", k, v.s, maxRepeat)
			}
			bound[i] = x
		}
		// llama.cpp's GBNF parser would loop, allocating, until memory
		// runs out on {m,n} with n < m.
		if bound[0] >= 0 && bound[1] >= 0 && bound[0] > bound[1] {
			return schemaErr("%s %d is over %s %d", pair[0], bound[0], pair[1], bound[1])
		}
	}
	if p := n.get("pattern"); p != nil && p.kind == jStr {
		if _, err := checkPattern(p.s); err != nil {
			return err
		}
	}
	if hasInteger(n.get("type")) {
		if err := integerBounds(n); err != nil {
			return err
		}
	}
	if r := n.get("$ref"); r != nil {
		if r.kind != jStr {
			return schemaErr("$ref is not a string")
		}
		if err := c.resolve(r.s); err != nil {
			return err
		}
	}
	return nil
}

// wholeNumber reads a JSON number that must be a whole one, as C++ reads
// it into an int: 1e3 and 2.0 are whole, 2.5 is not. Huge values come back
// as math.MaxInt64 or math.MinInt64.
func wholeNumber(s string) (int64, bool) {
	if x, err := strconv.ParseInt(s, 10, 64); err == nil {
		return x, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if (err != nil && !math.IsInf(f, 0)) || f != math.Trunc(f) {
		return 0, false
	}
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64, true
	case f <= math.MinInt64:
		return math.MinInt64, true
	}
	return int64(f), true
}

// hasInteger reports whether a "type" value names "integer", alone or in a
// list: the converter visits a copy of the schema for each type listed.
func hasInteger(t *jnode) bool {
	switch {
	case t == nil:
		return false
	case t.kind == jStr:
		return t.s == "integer"
	case t.kind == jArr:
		for _, e := range t.vals {
			if hasInteger(e) {
				return true
			}
		}
	}
	return false
}

// integerBounds checks minimum, maximum and their exclusive forms of an
// integer schema. The converter reads them with get<int64_t>(), undefined
// past int64, then adds 1 to exclusiveMinimum, subtracts 1 from
// exclusiveMaximum and negates negative bounds: each must stay in range.
func integerBounds(n *jnode) error {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	read := func(k string, min, max int64) (int64, bool, error) {
		v := n.get(k)
		if v == nil || v.kind != jNum {
			return 0, false, nil
		}
		var x int64
		if i, err := strconv.ParseInt(v.s, 10, 64); err == nil {
			x = i
		} else {
			f, err := strconv.ParseFloat(v.s, 64)
			if err != nil || f >= math.MaxInt64 || f < math.MinInt64 {
				return 0, false, schemaErr("%s %s is out of the range of a 64-bit integer", k, v.s)
			}
			x = int64(f) // as C++ truncates
		}
		if x < min || x > max {
			return 0, false, schemaErr("%s %s is out of the range of a 64-bit integer", k, v.s)
		}
		return x, true, nil
	}
	if x, ok, err := read("minimum", math.MinInt64, math.MaxInt64); err != nil {
		return err
	} else if ok {
		lo = x
	} else if x, ok, err := read("exclusiveMinimum", math.MinInt64, math.MaxInt64-1); err != nil {
		return err
	} else if ok {
		lo = x + 1
	}
	if x, ok, err := read("maximum", math.MinInt64+1, math.MaxInt64); err != nil {
		return err
	} else if ok {
		hi = x
	} else if x, ok, err := read("exclusiveMaximum", math.MinInt64+2, math.MaxInt64); err != nil {
		return err
	} else if ok {
		hi = x - 1
	}
	if lo > hi {
		return schemaErr("integer schema with minimum %d over maximum %d", lo, hi)
	}
	return nil
}

// resolve finds the target of a "$ref" as the converter does: a JSON
// pointer from the document's root, its tokens neither ~-unescaped nor
// percent-decoded. Remote references are refused: the converter cannot
// fetch them.
func (c *schemaChecker) resolve(ref string) error {
	if _, ok := c.refs[ref]; ok {
		return nil
	}
	if len(ref) > maxRefBytes {
		return schemaErr("$ref of %d bytes, over %d", len(ref), maxRefBytes)
	}
	if !strings.HasPrefix(ref, "#/") {
		return schemaErr("$ref %.60q is not local: only references of the form #/… are supported", ref)
	}
	t := c.root
	copied := int64(c.root.size) // the converter copies the document, then each step
	for _, sel := range strings.Split(ref[2:], "/") {
		switch {
		case t.kind == jObj && t.has(sel):
			t = t.get(sel)
		case t.kind == jArr:
			i, err := strconv.Atoi(sel)
			if err != nil || i < 0 || i >= len(t.vals) || strings.TrimLeft(sel, "0123456789") != "" {
				return schemaErr("$ref %.60q does not resolve", ref)
			}
			t = t.vals[i]
		default:
			return schemaErr("$ref %.60q does not resolve", ref)
		}
		copied += int64(t.size)
	}
	c.refs[ref] = t
	c.refCost += copied
	return nil
}

// refCycles refuses "$ref"s that lead to each other with nothing in
// between ({"$ref":"#/$defs/a"} where a is {"$ref":"#/$defs/a"}): the
// converter follows such chains in allOf without end, until the stack
// overflows.
func (c *schemaChecker) refCycles() error {
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[string]int, len(c.refs))
	for ref := range c.refs {
		var path []string
		r := ref
		for state[r] == unseen {
			state[r] = onPath
			path = append(path, r)
			next := c.refs[r].get("$ref")
			if next == nil {
				break
			}
			r = next.s
		}
		if state[r] == onPath && c.refs[r].has("$ref") {
			return schemaErr("$ref %.60q leads back to itself", r)
		}
		for _, p := range path {
			state[p] = done
		}
	}
	return nil
}

// checkPattern checks a "pattern" as llama.cpp's converter reads it
// (_visit_pattern), which is not a full regular expression parser: it
// dereferences the item before a quantifier without checking there is one
// (so "^*$" and "^(?:a)$" crash the process), loops forever on a ']' or '}'
// outside brackets, and recurses once per group. It returns the number of
// {m,n} quantifiers, each of which the converter turns into a rule.
func checkPattern(p string) (int, error) {
	if len(p) < 2 || p[0] != '^' || p[len(p)-1] != '$' {
		return 0, schemaErr("pattern %.60q must start with ^ and end with $", p)
	}
	s := p[1 : len(p)-1]
	items := []int{0} // items so far in each open group
	reps := 0
	bad := func(i int, what string) (int, error) {
		return 0, schemaErr("pattern %.60q: %s at offset %d", p, what, i+1)
	}
	nonLiteral := func(c byte) bool { return strings.IndexByte("|.()[]{}*+?", c) >= 0 }
	for i := 0; i < len(s); {
		top := &items[len(items)-1]
		switch c := s[i]; c {
		case '.', '|':
			*top++
			i++
		case '(':
			if len(items) >= MaxSchemaDepth {
				return bad(i, fmt.Sprintf("groups nest deeper than %d levels", MaxSchemaDepth))
			}
			items = append(items, 0)
			i++
		case ')':
			if len(items) == 1 {
				return bad(i, "unbalanced ')'")
			}
			items = items[:len(items)-1]
			items[len(items)-1]++
			i++
		case '[':
			j := i + 1
			for j < len(s) && s[j] != ']' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return bad(i, "unbalanced '['")
			}
			*top++
			i = j + 1
		case '*', '+', '?':
			if *top == 0 {
				return bad(i, fmt.Sprintf("nothing to repeat before %q (groups such as (?:…) are not supported)", c))
			}
			i++
		case '{':
			if *top == 0 {
				return bad(i, "nothing to repeat before '{'")
			}
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				return bad(i, "unbalanced '{'")
			}
			if err := checkRepeat(p, s[i+1:i+j]); err != nil {
				return 0, err
			}
			reps++
			i += j + 1
		default:
			// The converter's literal loop: it takes at least one byte
			// unless the first is ']' or '}', on which it spins forever.
			n := 0
		literal:
			for i < len(s) {
				switch {
				case s[i] == '\\' && i < len(s)-1:
					i += 2
				case s[i] == '"':
					i++
				case !nonLiteral(s[i]) && (i == len(s)-1 || n == 0 || s[i+1] == '.' || !nonLiteral(s[i+1])):
					i++
				default:
					break literal
				}
				n++
			}
			if n == 0 {
				return bad(i, fmt.Sprintf("unescaped %q", s[i]))
			}
			*top++
		}
	}
	if len(items) > 1 {
		return bad(len(s), "unbalanced '('")
	}
	return reps, nil
}

// checkRepeat checks the inside of a pattern's {m,n}: m, "m,", ",n" or
// "m,n", with no more than maxRepeat and m ≤ n.
func checkRepeat(p, body string) error {
	lo, hi, comma := body, body, false
	if i := strings.IndexByte(body, ','); i >= 0 {
		lo, hi, comma = body[:i], body[i+1:], true
	}
	num := func(s string, empty int64) (int64, bool) {
		if s == "" {
			return empty, comma
		}
		if strings.TrimLeft(s, "0123456789") != "" || len(s) > 9 {
			return 0, false
		}
		x, _ := strconv.ParseInt(s, 10, 64)
		return x, true
	}
	m, ok1 := num(lo, 0)
	n, ok2 := num(hi, -1)
	switch {
	case !ok1 || !ok2:
		return schemaErr("pattern %.60q: invalid repetition {%s}", p, body)
	case m > maxRepeat || n > maxRepeat:
		return schemaErr("pattern %.60q: repetition {%s} is over %d", p, body, maxRepeat)
	case n >= 0 && m > n:
		return schemaErr("pattern %.60q: repetition {%s} has its minimum over its maximum", p, body)
	}
	return nil
}
