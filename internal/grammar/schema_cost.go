package grammar

import (
	"strconv"
	"strings"
)

// The estimator walks a schema the way llama.cpp's converter does
// (common_schema_converter::visit in common/json-schema-to-grammar.cpp) and
// adds up what each step costs there, in units of about a nanosecond,
// measured on the pinned sources. What grows faster than the schema:
//
//   - rule names: a property's rule is named after the path to it, and
//     every rule name goes through a std::regex at about 200 ns a byte, so
//     deep nesting of long names is quadratic;
//   - optional properties: for an object with n of them, _build_object_rule
//     copies name lists n³/6 times and adds n²/2 rules;
//   - copies: each level copies its subschemas as nlohmann trees, a type
//     list copies the schema once per type (and nested lists multiply), and
//     resolving each distinct $ref copies the whole document;
//   - names that differ only in punctuation map to one rule name, which
//     _add_rule then searches for a free suffix one by one.
//
// The budget is about half a second: 64 KiB of plain properties fits in it,
// an object with 400 optional properties does not.
const (
	costVisit     = 50_000 // a visit: most build a std::regex for the uuid test
	costRegexByte = 200    // a byte of a rule name through INVALID_RULE_CHARS_RE
	costRule      = 2_000  // _add_rule's map work
	costCopyByte  = 60     // a byte of JSON copied as an nlohmann tree
	costByte      = 10     // a byte of rule text built or compared
	costStrCopy   = 30     // a std::string copied
	costCollision = 300    // a step of _add_rule's search for a free name
)

type costKind uint8

const (
	kVisits costKind = iota
	kNames
	kCopies
	kOptional
	kCollisions
	nKinds
)

func (k costKind) String() string {
	switch k {
	case kVisits:
		return "it has too many subschemas"
	case kNames:
		return "its rule names grow too long (deep nesting of long property names)"
	case kCopies:
		return "it copies too much (large subschemas under many $refs, type lists or levels)"
	case kOptional:
		return `an object has too many optional properties (list more of them in "required")`
	default:
		return "too many of its property names differ only in punctuation"
	}
}

// primitive reports whether the converter knows type t (PRIMITIVE_RULES).
func primitive(t string) bool {
	switch t {
	case "boolean", "decimal-part", "integral-part", "number", "integer", "value", "object", "array", "uuid", "char", "string", "null":
		return true
	}
	return false
}

// formatRule reports whether the converter has a rule of that name for a
// string format (STRING_FORMAT_RULES).
func formatRule(name string) bool {
	switch name {
	case "date", "time", "date-time", "date-string", "time-string", "date-time-string":
		return true
	}
	return false
}

// uuidFormat is the converter's test ^uuid[1-5]?$.
func uuidFormat(f string) bool {
	return f == "uuid" || len(f) == 5 && strings.HasPrefix(f, "uuid") && '1' <= f[4] && f[4] <= '5'
}

// reserved is the converter's is_reserved_name.
func reserved(name string) bool { return name == "root" || primitive(name) || formatRule(name) }

type estimator struct {
	refs      map[string]*jnode
	cost      int64
	out       int64 // the grammar's bytes
	byKind    [nKinds]int64
	site      [nKinds]string // the rule name of the costliest step of each kind
	siteCost  [nKinds]int64
	resolving map[string]bool // $refs being converted
	converted map[string]bool // rule names of $refs converted
	names     map[string]int  // rules stored under each name, as _add_rule escapes it
	stop      bool            // the converter throws here: nothing after counts
	err       error
}

// estimate returns an error if converting root would cost more than
// schemaBudget or nest deeper than 4·MaxSchemaDepth through "$ref". refs are
// its resolved "$ref"s, refCost the bytes copied to resolve them.
func estimate(root *jnode, refs map[string]*jnode, refCost int64) error {
	e := &estimator{refs: refs, resolving: map[string]bool{}, converted: map[string]bool{}, names: map[string]int{}}
	// Parsing, the copy json_schema_to_grammar makes, and resolve_refs.
	e.charge(kCopies, 3*int64(root.size)*costCopyByte, "root")
	e.charge(kCopies, refCost*costCopyByte, "root")
	e.visit(root, "", 1)
	return e.err
}

func (e *estimator) charge(k costKind, c int64, site string) {
	if e.err != nil {
		return
	}
	if site == "" {
		site = "root"
	}
	e.cost += c
	e.byKind[k] += c
	if c > e.siteCost[k] {
		e.siteCost[k], e.site[k] = c, site
	}
	if e.cost > schemaBudget {
		worst := kVisits
		for k := range nKinds {
			if e.byKind[k] > e.byKind[worst] {
				worst = k
			}
		}
		e.err = schemaErr("schema is too costly to convert: %s (near rule %.60q)", worst, e.site[worst])
	}
}

func (e *estimator) done() bool { return e.err != nil || e.stop }

// visit follows common_schema_converter::visit and returns the name of the
// rule it makes, as the converter does.
func (e *estimator) visit(s *jnode, name string, depth int) string {
	if e.done() {
		return ""
	}
	if depth > 4*MaxSchemaDepth {
		e.err = schemaErr("schema nests deeper than %d levels through $ref", 4*MaxSchemaDepth)
		return ""
	}
	e.charge(kVisits, costVisit, name)
	t := s.get("type")
	if t != nil {
		e.charge(kCopies, int64(t.size)*costCopyByte, name)
	}
	format := ""
	if f := s.get("format"); f != nil {
		if f.kind != jStr {
			e.stop = true
			return ""
		}
		format = f.s
	}
	ruleName := name
	switch {
	case reserved(name):
		ruleName = name + "-"
	case name == "":
		ruleName = "root"
	}
	is := t.isStr
	switch {
	case s.has("$ref"):
		return e.addRule(ruleName, len(e.ref(s.get("$ref").s, depth)))
	case s.has("oneOf") || s.has("anyOf"):
		alts := s.get("oneOf")
		if alts == nil {
			alts = s.get("anyOf")
		}
		if alts.kind != jArr {
			e.stop = true
			return ""
		}
		e.charge(kCopies, int64(alts.size)*costCopyByte, name)
		return e.addRule(ruleName, e.union(name, alts.vals, depth+2))
	case t != nil && t.kind == jArr:
		alts := make([]*jnode, len(t.vals))
		for i, tt := range t.vals {
			e.charge(kCopies, int64(s.size)*costCopyByte, name)
			alts[i] = s.withType(tt)
		}
		return e.addRule(ruleName, e.union(name, alts, depth))
	case s.has("const"):
		return e.addRule(ruleName, e.literal(s.get("const"), name)+8)
	case s.has("enum"):
		n := 8
		for _, v := range s.get("enum").elems() {
			n += e.literal(v, name) + 3
		}
		return e.addRule(ruleName, n)
	case (t == nil || is("object")) && (s.has("properties") || s.has("additionalProperties") && !isTrue(s.get("additionalProperties"))):
		required := requiredOf(s)
		var keys []string
		var vals []*jnode
		if p := s.get("properties"); p != nil {
			if p.kind != jObj {
				e.err = schemaErr(`"properties" is not an object (near rule %.60q)`, ruleName)
				return ""
			}
			e.charge(kCopies, int64(p.size)*costCopyByte, name)
			keys, vals = p.keys, p.vals
		}
		return e.addRule(ruleName, e.object(keys, vals, required, name, s.get("additionalProperties"), depth))
	case (t == nil || is("object") || is("string")) && s.has("allOf"):
		return e.allOf(s, name, ruleName, depth)
	case (t == nil || is("array")) && (s.has("items") || s.has("prefixItems")):
		items := s.get("items")
		if items == nil {
			items = s.get("prefixItems")
		}
		e.charge(kCopies, int64(items.size)*costCopyByte, name)
		if items.kind == jArr {
			n := 20
			for i, it := range items.vals {
				n += len(e.visit(it, join(name, "tuple-"+strconv.Itoa(i)), depth+2)) + 12
			}
			return e.addRule(ruleName, n)
		}
		item := e.visit(items, join(name, "item"), depth+1)
		if m := s.get("minItems"); m != nil && m.kind != jNum {
			e.stop = true // get<int>() throws
			return ""
		}
		return e.addRule(ruleName, 2*len(item)+60)
	case (t == nil || is("string")) && s.has("pattern"):
		p := s.get("pattern")
		if p.kind != jStr {
			e.stop = true
			return ""
		}
		reps, err := checkPattern(p.s)
		if err != nil {
			e.err = err
			return ""
		}
		// _visit_pattern reads the pattern once; each {m,n} on a group or
		// a class becomes a rule of its own.
		e.charge(kVisits, int64(len(p.s))*costByte*10, name)
		for i := range reps {
			e.addRule(ruleName+"-"+strconv.Itoa(i+1), len(p.s))
		}
		return e.addRule(ruleName, 3*len(p.s)+20)
	case (t == nil || is("string")) && uuidFormat(format):
		if ruleName == "root" {
			return "root"
		}
		return format
	case (t == nil || is("string")) && formatRule(format+"-string"):
		return e.addRule(ruleName, 40)
	case is("string") && (s.has("minLength") || s.has("maxLength")):
		for _, k := range []string{"minLength", "maxLength"} {
			if v := s.get(k); v != nil && v.kind != jNum {
				e.stop = true
				return ""
			}
		}
		return e.addRule(ruleName, 60)
	case is("integer") && (s.has("minimum") || s.has("exclusiveMinimum") || s.has("maximum") || s.has("exclusiveMaximum")):
		// _build_min_max_int writes about 25·d² bytes for bounds of d
		// digits, at about 100 ns a byte.
		d := 1
		for _, k := range []string{"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"} {
			if v := s.get(k); v != nil && v.kind == jNum {
				d = max(d, len(strings.TrimLeft(v.s, "-")))
			}
		}
		d = min(d, 20)
		e.charge(kVisits, int64(25*d*d)*costByte*10, name)
		return e.addRule(ruleName, 25*d*d)
	case s.empty() || is("object"):
		return e.addRule(ruleName, 8)
	case t == nil || t.kind != jStr || !primitive(t.s):
		// "Unrecognized schema": the converter keeps schema.dump() in its
		// error list, goes on and throws at the end.
		e.charge(kCopies, int64(s.size)*costCopyByte, name)
		return ""
	case ruleName == "root":
		return "root"
	default:
		return t.s
	}
}

// ref follows _resolve_ref: a $ref's target is converted once, under a rule
// named after the reference, unless it is converted to a primitive rule of
// another name, in which case every use converts it again.
func (e *estimator) ref(ref string, depth int) string {
	frag := ref[strings.IndexByte(ref, '#')+1:]
	refName := "ref" + escapeRuleName(frag)
	e.charge(kNames, int64(len(frag))*costRegexByte, refName)
	if e.converted[refName] || e.resolving[ref] {
		return refName
	}
	t := e.refs[ref]
	e.charge(kCopies, int64(t.size)*costCopyByte, refName)
	e.resolving[ref] = true
	got := e.visit(t, refName, depth+1)
	delete(e.resolving, ref)
	if got == refName {
		e.converted[refName] = true
	}
	return refName
}

func (e *estimator) union(name string, alts []*jnode, depth int) int {
	n := 0
	for i, a := range alts {
		an := name + "-" + strconv.Itoa(i)
		if name == "" {
			an = "alternative-" + strconv.Itoa(i)
		}
		n += len(e.visit(a, an, depth)) + 3
	}
	return n
}

// allOf follows the converter's allOf branch: it gathers the properties of
// the components, following each component's chain of $refs, and builds
// one object rule of them.
func (e *estimator) allOf(s *jnode, name, ruleName string, depth int) string {
	required := map[string]bool{}
	var keys []string
	var vals []*jnode
	enum := 0
	add := func(c *jnode, req bool) {
		for c.has("$ref") {
			c = e.refs[c.get("$ref").s] // refCycles refused loops
		}
		switch {
		case c.has("properties"):
			p := c.get("properties")
			if p.kind != jObj {
				e.err = schemaErr(`"properties" is not an object (near rule %.60q)`, ruleName)
				return
			}
			keys, vals = append(keys, p.keys...), append(vals, p.vals...)
			if req {
				for _, k := range p.keys {
					required[k] = true
				}
			}
		case c.has("enum"):
			for _, v := range c.get("enum").elems() {
				enum += e.literal(v, name) + 3
			}
		}
	}
	for _, c := range s.get("allOf").elems() {
		if c.has("anyOf") {
			for _, cc := range c.get("anyOf").elems() {
				add(cc, false)
			}
		} else {
			add(c, true)
		}
	}
	if e.done() {
		return ""
	}
	return e.addRule(ruleName, enum+e.object(keys, vals, required, name, nil, depth+4))
}

// object follows _build_object_rule and returns the length of the rule.
func (e *estimator) object(keys []string, vals []*jnode, required map[string]bool, name string, additional *jnode, depth int) int {
	type opt struct {
		key string
		kv  int // length of its key-value rule's name
	}
	var optional []opt
	n := 30
	for i, k := range keys {
		pn := join(name, k)
		r := e.visit(vals[i], pn, depth+2)
		e.charge(kNames, int64(len(k)+2)*costByte*5, pn) // its literal, escaped by std::regex
		kv := e.addRule(pn+"-kv", len(k)+len(r)+20)
		if e.done() {
			return 0
		}
		if required[k] {
			n += len(kv) + 12
		} else {
			optional = append(optional, opt{k, len(kv)})
		}
	}
	if additional != nil && (isTrue(additional) || additional.kind == jObj) {
		sub := join(name, "additional")
		value := "value"
		if additional.kind == jObj {
			value = e.visit(additional, sub+"-value", depth+1)
		}
		key := "string"
		if len(keys) > 0 {
			// _not_strings: a trie of the property names, walked
			// recursively, printed as nested groups.
			total := 0
			for _, k := range keys {
				total += len(k)
			}
			e.charge(kNames, int64(total)*costByte*20, sub)
			key = e.addRule(sub+"-k", 12*total+20)
		}
		kv := e.addRule(sub+"-kv", len(key)+len(value)+15)
		optional = append(optional, opt{"*", len(kv)})
	}
	if e.done() || len(optional) == 0 {
		return n
	}
	// get_recursive_refs, once for each optional property i: a chain of
	// calls down the rest of the list, each of which copies that rest and
	// adds the rule "<name>-<key>-rest" of its first key. The rule of the
	// j-th key is added j+1 times, with the same text each time.
	m := int64(len(optional))
	avg := int64(0)
	for _, o := range optional {
		avg += int64(len(o.key))
	}
	avg /= m
	e.charge(kOptional, m*(m+1)*(m+2)/6*(costStrCopy+avg), name)
	for j, o := range optional[:len(optional)-1] {
		rest := join(name, o.key) + "-rest"
		text := optional[j+1].kv + len(rest) + 40
		esc := escapeRuleName(rest)
		found := int64(e.names[esc])
		call := int64(len(rest))*costRegexByte + costRule + int64(text)*costByte + found*(costCollision+int64(len(esc)))
		e.charge(kOptional, int64(j+1)*call, rest)
		e.names[esc]++
		e.out += int64(len(rest) + text)
		n += o.kv + len(rest) + 4
	}
	return n
}

// addRule follows _add_rule: the name goes through INVALID_RULE_CHARS_RE,
// and a name already taken by another rule is tried with the suffixes 0,
// 1, … in turn. Rules are counted as different from those of the same name.
func (e *estimator) addRule(name string, length int) string {
	e.out += int64(len(name) + length + 5)
	if e.out > MaxBytes && e.err == nil {
		e.err = schemaErr("schema converts to a grammar of more than %d bytes (near rule %.60q)", MaxBytes, name)
	}
	esc := escapeRuleName(name)
	found := int64(e.names[esc])
	e.charge(kNames, int64(len(name))*costRegexByte+costRule+int64(length)*costByte, name)
	if found > 0 {
		e.charge(kCollisions, found*(costCollision+int64(len(esc))+int64(length)), name)
	}
	e.names[esc]++
	return name
}

// literal charges _generate_constant_rule: v's dump, escaped by std::regex.
func (e *estimator) literal(v *jnode, site string) int {
	e.charge(kCopies, int64(v.size)*costByte*5, site)
	return v.size + 2
}

func join(name, part string) string {
	if name == "" {
		return part
	}
	return name + "-" + part
}

func requiredOf(s *jnode) map[string]bool {
	required := map[string]bool{}
	if r := s.get("required"); r != nil && r.kind == jArr {
		for _, x := range r.vals {
			if x.kind == jStr {
				required[x.s] = true
			}
		}
	}
	return required
}

func isTrue(n *jnode) bool { return n != nil && n.kind == jBool && n.s == "true" }

// empty is nlohmann's empty(): true for null and for empty objects and
// arrays.
func (n *jnode) empty() bool {
	return n.kind == jNull || (n.kind == jObj || n.kind == jArr) && len(n.vals) == 0
}

// withType returns a copy of object n whose "type" is t, as the converter
// makes one for each entry of a type list.
func (n *jnode) withType(t *jnode) *jnode {
	c := &jnode{kind: jObj, size: n.size}
	for i, k := range n.keys {
		c.set(k, n.vals[i])
	}
	c.set("type", t)
	return c
}

// escapeRuleName replaces each run of bytes other than [a-zA-Z0-9-] with
// "-", as _add_rule does with INVALID_RULE_CHARS_RE.
func escapeRuleName(s string) string {
	var b strings.Builder
	run := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			b.WriteByte(c)
			run = false
		} else if !run {
			b.WriteByte('-')
			run = true
		}
	}
	return b.String()
}
