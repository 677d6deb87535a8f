package jinja

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// filterFn is a filter: the value left of the pipe, then the arguments.
type filterFn func(r *renderer, v any, args []any, kw *Map) (any, error)

// lookupFilter returns the filter with the given name, or nil.
func lookupFilter(name string) filterFn {
	switch name {
	case "abs":
		return filterAbs
	case "attr":
		return filterAttr
	case "batch":
		return lazyFilter("do_batch", filterBatch)
	case "capitalize":
		return strFilter(pyCapitalize)
	case "center":
		return filterCenter
	case "count", "length":
		return filterLength
	case "d", "default":
		return filterDefault
	case "dictsort":
		return filterDictsort
	case "e", "escape", "forceescape":
		return filterEscape
	case "first":
		return filterFirst
	case "float":
		return filterFloat
	case "format":
		return filterFormat
	case "indent":
		return filterIndent
	case "int":
		return filterInt
	case "items":
		return filterItems
	case "join":
		return filterJoin
	case "last":
		return filterLast
	case "list":
		return filterList
	case "lower":
		return strFilter(strings.ToLower)
	case "map":
		return lazyFilter("sync_do_map", filterMap)
	case "max":
		return minMax(true)
	case "min":
		return minMax(false)
	case "reject":
		return lazyFilter("select_or_reject", selectOrReject(false, false))
	case "rejectattr":
		return lazyFilter("select_or_reject", selectOrReject(false, true))
	case "replace":
		return filterReplace
	case "reverse":
		return filterReverse
	case "round":
		return filterRound
	case "safe":
		return func(r *renderer, v any, args []any, kw *Map) (any, error) { return v, nil }
	case "select":
		return lazyFilter("select_or_reject", selectOrReject(true, false))
	case "selectattr":
		return lazyFilter("select_or_reject", selectOrReject(true, true))
	case "sort":
		return filterSort
	case "string":
		return func(r *renderer, v any, args []any, kw *Map) (any, error) { return toStr(v), nil }
	case "striptags":
		return filterStriptags
	case "sum":
		return filterSum
	case "title":
		return strFilter(jinjaTitle)
	case "tojson":
		return filterToJSON
	case "trim":
		return filterTrim
	case "unique":
		return lazyFilter("sync_do_unique", filterUnique)
	case "upper":
		return strFilter(pyUpper)
	case "wordcount":
		return filterWordcount
	case "filesizeformat", "groupby", "pprint", "random", "slice", "truncate",
		"urlencode", "urlize", "wordwrap", "xmlattr":
		return func(r *renderer, v any, args []any, kw *Map) (any, error) {
			return nil, &Error{Message: fmt.Sprintf("jinja: the '%s' filter is not supported", name)}
		}
	}
	return nil
}

// callFilter applies a filter by name (for map).
func (r *renderer) callFilter(name string, v any, args []any, kw *Map) (any, error) {
	fn := lookupFilter(name)
	if fn == nil {
		return nil, &Error{Message: fmt.Sprintf("No filter named '%s'.", name)}
	}
	return fn(r, v, args, kw)
}

// lazyFilter wraps a filter that Jinja implements as a Python generator:
// its errors surface only when the result is iterated.
func lazyFilter(kind string, f filterFn) filterFn {
	return func(r *renderer, v any, args []any, kw *Map) (any, error) {
		out, err := f(r, v, args, kw)
		if err != nil {
			return &generator{kind: kind, err: err}, nil
		}
		return out, nil
	}
}

func strFilter(f func(string) string) filterFn {
	return func(r *renderer, v any, args []any, kw *Map) (any, error) {
		return f(toStr(v)), nil
	}
}

func filterAbs(r *renderer, v any, args []any, kw *Map) (any, error) {
	switch x := v.(type) {
	case bool, int64:
		n, _ := asInt(x)
		if n == math.MinInt64 {
			return nil, errOverflow()
		}
		return absInt(n), nil
	case float64:
		return math.Abs(x), nil
	}
	return nil, &Error{Message: fmt.Sprintf("bad operand type for abs(): '%s'", typeName(v))}
}

func filterAttr(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("attr", []string{"name"}, 1, args, kw)
	if err != nil {
		return nil, err
	}
	name, _, err := p.str(0, "")
	if err != nil {
		return nil, err
	}
	return getAttr(v, name)
}

func filterBatch(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("batch", []string{"linecount", "fill_with"}, 1, args, kw)
	if err != nil {
		return nil, err
	}
	n, err := p.int(0, 0)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, &Error{Message: "batch size must be positive"}
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	var out []any
	for i := 0; i < len(items); i += int(n) {
		chunk := slices.Clone(items[i:min(i+int(n), len(items))])
		if len(chunk) < int(n) && p.has(1) {
			for len(chunk) < int(n) {
				chunk = append(chunk, p.get(1, nil))
			}
		}
		out = append(out, chunk)
	}
	return &generator{kind: "do_batch", items: out}, nil
}

func filterCenter(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("center", []string{"width"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	w, err := p.int(0, 80)
	if err != nil {
		return nil, err
	}
	return pad("center", toStr(v), int(min(w, maxOutputSize)), " "), nil
}

func filterLength(r *renderer, v any, args []any, kw *Map) (any, error) {
	n, err := length(v)
	return int64(n), err
}

func filterDefault(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("default", []string{"default_value", "boolean"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	_, isUndef := v.(*undefined)
	if isUndef || (truthy(p.get(1, false)) && !truthy(v)) {
		return p.get(0, ""), nil
	}
	return v, nil
}

func filterDictsort(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("dictsort", []string{"case_sensitive", "by", "reverse"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	m, ok := v.(*Map)
	if !ok {
		if u, isU := v.(*undefined); isU {
			return nil, u.fail()
		}
		return nil, &Error{Message: fmt.Sprintf("'%s' object has no attribute 'items'", typeName(v))}
	}
	by, _, err := p.str(1, "key")
	if err != nil {
		return nil, err
	}
	pos := 0
	switch by {
	case "key":
	case "value":
		pos = 1
	default:
		return nil, &Error{Message: "You can only sort by either 'key' or 'value'"}
	}
	cs := truthy(p.get(0, false))
	items := viewOf(m, "items").items
	var sortErr error
	slices.SortStableFunc(items, func(a, b any) int {
		c, err := compare(ignoreCase(a.(tuple)[pos], cs), ignoreCase(b.(tuple)[pos], cs))
		if err != nil && sortErr == nil {
			sortErr = err
		}
		return c
	})
	if sortErr != nil {
		return nil, sortErr
	}
	if truthy(p.get(2, false)) {
		slices.Reverse(items)
	}
	return items, nil
}

func ignoreCase(v any, caseSensitive bool) any {
	if s, ok := v.(string); ok && !caseSensitive {
		return strings.ToLower(s)
	}
	return v
}

func filterEscape(r *renderer, v any, args []any, kw *Map) (any, error) {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&#34;", "'", "&#39;").Replace(toStr(v)), nil
}

func filterFirst(r *renderer, v any, args []any, kw *Map) (any, error) {
	if g, ok := v.(*generator); ok {
		if g.err != nil {
			_, err := g.drain()
			return nil, err
		}
		if g.pos < len(g.items) {
			g.pos++
			return g.items[g.pos-1], nil
		}
		return &undefined{hint: "No first item, sequence was empty."}, nil
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return &undefined{hint: "No first item, sequence was empty."}, nil
	}
	return items[0], nil
}

func filterLast(r *renderer, v any, args []any, kw *Map) (any, error) {
	switch v.(type) {
	case *generator, *dictView:
		return nil, &Error{Message: fmt.Sprintf("'%s' object is not reversible", typeName(v))}
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return &undefined{hint: "No last item, sequence was empty."}, nil
	}
	return items[len(items)-1], nil
}

// pyFloat parses a string as Python's float() does.
func pyFloat(s string) (float64, bool) {
	s = strings.TrimFunc(s, isPySpace)
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "inf", "infinity":
		if strings.HasPrefix(s, "-") {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	if strings.Contains(s, "__") || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") {
		return 0, false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789+-.eE_", c) {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true
}

// pyInt parses a string as Python's int(s, base) does.
func pyInt(s string, base int) (int64, bool) {
	s = strings.TrimFunc(s, isPySpace)
	neg := false
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		neg = s[0] == '-'
		s = s[1:]
	}
	if base == 0 || base == 16 || base == 8 || base == 2 {
		ls := strings.ToLower(s)
		for _, pfx := range []struct {
			p string
			b int
		}{{"0x", 16}, {"0o", 8}, {"0b", 2}} {
			if strings.HasPrefix(ls, pfx.p) && (base == 0 || base == pfx.b) {
				s, base = s[2:], pfx.b
				s = strings.TrimPrefix(s, "_")
			}
		}
		if base == 0 {
			base = 10
		}
	}
	if s == "" || strings.Contains(s, "__") || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), base, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func filterFloat(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("float", []string{"default"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case *undefined:
		return nil, x.fail()
	case float64:
		return x, nil
	case bool, int64:
		f, _ := asFloat(x)
		return f, nil
	case string:
		if f, ok := pyFloat(x); ok {
			return f, nil
		}
	}
	return p.get(0, 0.0), nil
}

func filterInt(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("int", []string{"default", "base"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	base, err := p.int(1, 10)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case *undefined:
		return nil, x.fail()
	case bool, int64:
		n, _ := asInt(x)
		return n, nil
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) && math.Abs(x) < 1<<63 {
			return int64(x), nil
		}
	case string:
		if n, ok := pyInt(x, int(base)); ok {
			return n, nil
		}
		if f, ok := pyFloat(x); ok && !math.IsNaN(f) && !math.IsInf(f, 0) && math.Abs(f) < 1<<63 {
			return int64(f), nil
		}
	}
	return p.get(0, int64(0)), nil
}

func filterFormat(r *renderer, v any, args []any, kw *Map) (any, error) {
	if len(args) > 0 && kw.Len() > 0 {
		return nil, &Error{Message: "can't handle positional and keyword arguments at the same time"}
	}
	if kw.Len() > 0 {
		return percentFormat(toStr(v), kw)
	}
	return percentFormat(toStr(v), tuple(args))
}

func filterIndent(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("indent", []string{"width", "first", "blank"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		if u, isU := v.(*undefined); isU {
			return nil, u.fail()
		}
		return nil, opError("+=", v, "")
	}
	indention := "    "
	switch w := p.get(0, int64(4)).(type) {
	case string:
		indention = w
	default:
		n, ok := asInt(w)
		if !ok {
			return nil, &Error{Message: "indent width must be an int or a string"}
		}
		indention = strings.Repeat(" ", int(max(min(n, 1<<16), 0)))
	}
	s += "\n"
	lines := pySplitlines(s, false)
	var rv string
	if truthy(p.get(2, false)) {
		rv = strings.Join(lines, "\n"+indention)
	} else {
		rv = lines[0]
		if len(lines) > 1 {
			rest := make([]string, len(lines)-1)
			for i, l := range lines[1:] {
				if l != "" {
					l = indention + l
				}
				rest[i] = l
			}
			rv += "\n" + strings.Join(rest, "\n")
		}
	}
	if truthy(p.get(1, false)) {
		rv = indention + rv
	}
	return rv, nil
}

func filterItems(r *renderer, v any, args []any, kw *Map) (any, error) {
	return lazy("do_items", func() ([]any, error) {
		switch x := v.(type) {
		case *undefined:
			return nil, nil
		case *Map:
			return viewOf(x, "items").items, nil
		}
		return nil, &Error{Message: "Can only get item pairs from a mapping."}
	}), nil
}

func filterJoin(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("join", []string{"d", "attribute"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	if p.get(1, nil) != nil {
		get := attrGetter(p.get(1, nil), nil)
		for i, it := range items {
			if items[i], err = get(it); err != nil {
				return nil, err
			}
		}
	}
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = toStr(it)
	}
	return strings.Join(parts, toStr(p.get(0, ""))), nil
}

func filterList(r *renderer, v any, args []any, kw *Map) (any, error) {
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	return slices.Clone(items), nil
}

// attrGetter returns a function that looks up a dotted attribute path
// ("a.b.0") with getitem semantics, as jinja2's make_attrgetter.
func attrGetter(attribute any, def any) func(any) (any, error) {
	var parts []any
	if s, ok := attribute.(string); ok {
		for _, part := range strings.Split(s, ".") {
			if n, err := strconv.ParseInt(part, 10, 64); err == nil && part != "" && strings.Trim(part, "0123456789") == "" {
				parts = append(parts, n)
			} else {
				parts = append(parts, part)
			}
		}
	} else {
		parts = []any{attribute}
	}
	return func(item any) (any, error) {
		for _, part := range parts {
			var err error
			if item, err = getItem(item, part); err != nil {
				return nil, err
			}
			if _, isU := item.(*undefined); isU && def != nil {
				item = def
			}
		}
		return item, nil
	}
}

func filterMap(r *renderer, v any, args []any, kw *Map) (any, error) {
	out := &generator{kind: "sync_do_map"}
	if !truthy(v) {
		return out, nil
	}
	var fn func(any) (any, error)
	if len(args) == 0 {
		attr, ok := kw.get("attribute")
		if !ok {
			return nil, &Error{Message: "map requires a filter argument"}
		}
		def, _ := kw.get("default")
		for _, k := range kw.keys {
			if k != "attribute" && k != "default" {
				return nil, &Error{Message: "Unexpected keyword argument " + repr(k)}
			}
		}
		fn = attrGetter(attr, def)
	} else {
		name, ok := args[0].(string)
		if !ok {
			return nil, &Error{Message: "map filter name must be a string"}
		}
		fargs := args[1:]
		fn = func(item any) (any, error) { return r.callFilter(name, item, fargs, kw) }
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		x, err := fn(it)
		if err != nil {
			return nil, err
		}
		out.items = append(out.items, x)
	}
	return out, nil
}

func minMax(isMax bool) filterFn {
	return func(r *renderer, v any, args []any, kw *Map) (any, error) {
		name := "min"
		if isMax {
			name = "max"
		}
		p, err := bindArgs(name, []string{"case_sensitive", "attribute"}, 0, args, kw)
		if err != nil {
			return nil, err
		}
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return &undefined{hint: "No aggregated item, sequence was empty."}, nil
		}
		key := sortKey(p.get(1, nil), truthy(p.get(0, false)))
		best := items[0]
		bestKey, err := key(best)
		if err != nil {
			return nil, err
		}
		for _, it := range items[1:] {
			k, err := key(it)
			if err != nil {
				return nil, err
			}
			c, err := compare(k, bestKey)
			if err != nil {
				return nil, err
			}
			if (isMax && c > 0) || (!isMax && c < 0) {
				best, bestKey = it, k
			}
		}
		return best, nil
	}
}

// sortKey builds the key function of sort, min, max and unique: optional
// (comma separated) attributes, lower-cased strings unless case sensitive.
func sortKey(attribute any, caseSensitive bool) func(any) (any, error) {
	var getters []func(any) (any, error)
	if s, ok := attribute.(string); ok && strings.Contains(s, ",") {
		for _, part := range strings.Split(s, ",") {
			getters = append(getters, attrGetter(part, nil))
		}
	} else if attribute != nil {
		getters = append(getters, attrGetter(attribute, nil))
	}
	return func(item any) (any, error) {
		if len(getters) == 0 {
			return ignoreCase(item, caseSensitive), nil
		}
		if len(getters) == 1 {
			v, err := getters[0](item)
			return ignoreCase(v, caseSensitive), err
		}
		var keys []any
		for _, g := range getters {
			v, err := g(item)
			if err != nil {
				return nil, err
			}
			keys = append(keys, ignoreCase(v, caseSensitive))
		}
		return keys, nil
	}
}

func selectOrReject(keep, attr bool) filterFn {
	kind := "select_or_reject"
	return func(r *renderer, v any, args []any, kw *Map) (any, error) {
		out := &generator{kind: kind}
		if !truthy(v) {
			return out, nil
		}
		trans := func(x any) (any, error) { return x, nil }
		off := 0
		if attr {
			if len(args) == 0 {
				return nil, &Error{Message: "Missing parameter for attribute name"}
			}
			trans = attrGetter(args[0], nil)
			off = 1
		}
		test := func(x any) (bool, error) { return truthy(x), nil }
		if len(args) > off {
			name, ok := args[off].(string)
			if !ok {
				return nil, &Error{Message: "test name must be a string"}
			}
			targs := args[off+1:]
			fn := lookupTest(name)
			if fn == nil {
				return nil, &Error{Message: fmt.Sprintf("No test named '%s'.", name)}
			}
			test = func(x any) (bool, error) {
				res, err := fn(r, x, targs, kw)
				if err != nil {
					return false, err
				}
				return truthy(res), nil
			}
		}
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			x, err := trans(it)
			if err != nil {
				return nil, err
			}
			ok, err := test(x)
			if err != nil {
				return nil, err
			}
			if ok == keep {
				out.items = append(out.items, it)
			}
		}
		return out, nil
	}
}

func filterReplace(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("replace", []string{"old", "new", "count"}, 2, args, kw)
	if err != nil {
		return nil, err
	}
	n, err := p.int(2, -1)
	if err != nil {
		return nil, err
	}
	return pyReplace(toStr(v), toStr(p.get(0, nil)), toStr(p.get(1, nil)), int(n))
}

func filterReverse(r *renderer, v any, args []any, kw *Map) (any, error) {
	if s, ok := v.(string); ok {
		rs := []rune(s)
		slices.Reverse(rs)
		return string(rs), nil
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	rev := slices.Clone(items)
	slices.Reverse(rev)
	switch v.(type) {
	case *generator, *dictView:
		return rev, nil
	}
	return &generator{kind: "reversed", items: rev}, nil
}

func filterRound(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("round", []string{"precision", "method"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	prec, err := p.int(0, 0)
	if err != nil {
		return nil, err
	}
	method, _, err := p.str(1, "common")
	if err != nil {
		return nil, err
	}
	if method != "common" && method != "ceil" && method != "floor" {
		return nil, &Error{Message: "method must be common, ceil or floor"}
	}
	if u, ok := v.(*undefined); ok {
		return nil, u.fail()
	}
	if !isNumber(v) {
		return nil, &Error{Message: fmt.Sprintf("type %s doesn't define __round__ method", typeName(v))}
	}
	if method == "common" {
		if n, ok := asInt(v); ok {
			if prec >= 0 {
				return n, nil
			}
			f := float64(n)
			scale := math.Pow(10, float64(-prec))
			return int64(math.RoundToEven(f/scale) * scale), nil
		}
		f := v.(float64)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return f, nil
		}
		if prec > 300 {
			return f, nil
		}
		if prec < 0 {
			scale := math.Pow(10, float64(-prec))
			return math.RoundToEven(f/scale) * scale, nil
		}
		out, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', int(prec), 64), 64)
		return out, nil
	}
	f, _ := asFloat(v)
	scale := math.Pow(10, float64(prec))
	if method == "ceil" {
		return math.Ceil(f*scale) / scale, nil
	}
	return math.Floor(f*scale) / scale, nil
}

func filterSort(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("sort", []string{"reverse", "case_sensitive", "attribute"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	items = slices.Clone(items)
	key := sortKey(p.get(2, nil), truthy(p.get(1, false)))
	keys := make([]any, len(items))
	for i, it := range items {
		if keys[i], err = key(it); err != nil {
			return nil, err
		}
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	rev := truthy(p.get(0, false))
	var sortErr error
	slices.SortStableFunc(idx, func(a, b int) int {
		c, err := compare(keys[a], keys[b])
		if err != nil && sortErr == nil {
			sortErr = err
		}
		if rev {
			return -c
		}
		return c
	})
	if sortErr != nil {
		return nil, sortErr
	}
	out := make([]any, len(items))
	for i, j := range idx {
		out[i] = items[j]
	}
	return out, nil
}

func filterStriptags(r *renderer, v any, args []any, kw *Map) (any, error) {
	s := toStr(v)
	var b strings.Builder
	for {
		i := strings.IndexAny(s, "<")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			if j := strings.Index(rest, "-->"); j >= 0 {
				s = rest[j+3:]
				continue
			}
		default:
			if j := strings.IndexByte(rest, '>'); j >= 0 {
				s = rest[j+1:]
				continue
			}
		}
		b.WriteString(rest)
		break
	}
	words := pySplit(b.String(), "", false, -1, false)
	return html.UnescapeString(strings.Join(words, " ")), nil
}

func filterSum(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("sum", []string{"attribute", "start"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	total := p.get(1, int64(0))
	var get func(any) (any, error)
	if a := p.get(0, nil); a != nil {
		get = attrGetter(a, nil)
	}
	for _, it := range items {
		if get != nil {
			if it, err = get(it); err != nil {
				return nil, err
			}
		}
		if total, err = binop("+", total, it); err != nil {
			return nil, err
		}
	}
	return total, nil
}

func filterTrim(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("trim", []string{"chars"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	chars, has, err := p.str(0, "")
	if err != nil {
		return nil, err
	}
	return pyStrip(toStr(v), "strip", chars, has), nil
}

func filterUnique(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("unique", []string{"case_sensitive", "attribute"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	key := sortKey(p.get(1, nil), truthy(p.get(0, false)))
	seen := NewMap()
	out := &generator{kind: "sync_do_unique"}
	for _, it := range items {
		k, err := key(it)
		if err != nil {
			return nil, err
		}
		if _, ok := hashOf(k); !ok {
			return nil, &Error{Message: fmt.Sprintf("unhashable type: '%s'", typeName(k))}
		}
		if _, dup := seen.get(k); dup {
			continue
		}
		seen.set(k, true)
		out.items = append(out.items, it)
	}
	return out, nil
}

func filterWordcount(r *renderer, v any, args []any, kw *Map) (any, error) {
	n := int64(0)
	in := false
	for _, c := range toStr(v) {
		w := c == '_' || unicode.IsLetter(c) || unicode.IsNumber(c) || unicode.Is(unicode.Mn, c)
		if w && !in {
			n++
		}
		in = w
	}
	return n, nil
}

func filterToJSON(r *renderer, v any, args []any, kw *Map) (any, error) {
	p, err := bindArgs("tojson", []string{"ensure_ascii", "indent", "separators", "sort_keys"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	opts := jsonOptions{ensureASCII: truthy(p.get(0, false)), sortKeys: truthy(p.get(3, false)), itemSep: ", ", keySep: ": "}
	switch ind := p.get(1, nil).(type) {
	case nil:
	case string:
		opts.indent, opts.pretty = ind, true
	default:
		n, ok := asInt(ind)
		if !ok {
			return nil, &Error{Message: "tojson indent must be an int or a string"}
		}
		opts.indent, opts.pretty = strings.Repeat(" ", int(max(min(n, 1<<10), 0))), true
		opts.itemSep = ","
	}
	if _, ok := p.get(1, nil).(string); ok {
		opts.itemSep = ","
	}
	if sep := p.get(2, nil); sep != nil {
		items, err := iterate(sep)
		if err != nil || len(items) != 2 {
			return nil, &Error{Message: "tojson separators must be a pair of strings"}
		}
		a, ok1 := items[0].(string)
		b, ok2 := items[1].(string)
		if !ok1 || !ok2 {
			return nil, &Error{Message: "tojson separators must be a pair of strings"}
		}
		opts.itemSep, opts.keySep = a, b
	}
	return dumpJSON(v, opts)
}
