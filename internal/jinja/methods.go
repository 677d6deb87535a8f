package jinja

import (
	"fmt"
	"strings"
	"unicode"
)

// getAttr is the sandboxed environment's getattr: Python attributes
// (methods) first, then item lookup.
func getAttr(obj any, name string) (any, error) {
	switch x := obj.(type) {
	case *undefined:
		return nil, x.fail()
	case *Map:
		if m := dictMethod(x, name); m != nil {
			return m, nil
		}
		if v, ok := x.get(name); ok {
			return v, nil
		}
	case string:
		if m := stringMethod(x, name); m != nil {
			return m, nil
		}
	case []any:
		if m := listMethod(x, name, true); m != nil {
			return m, nil
		}
	case tuple:
		if m := listMethod(x, name, false); m != nil {
			return m, nil
		}
	case *namespace:
		if v, ok := x.attrs.get(name); ok {
			return v, nil
		}
	case *loopObj:
		return x.attr(name), nil
	}
	return undefinedAttr(obj, name), nil
}

// getItem is the environment's getitem: item lookup first, then attributes
// for string keys.
func getItem(obj any, key any) (any, error) {
	switch x := obj.(type) {
	case *undefined:
		return nil, x.fail()
	case *Map:
		if _, ok := hashOf(key); !ok {
			return nil, &Error{Message: fmt.Sprintf("unhashable type: '%s'", typeName(key))}
		}
		if v, ok := x.get(key); ok {
			return v, nil
		}
	case []any:
		if v, ok := indexSeq(x, key); ok {
			return v, nil
		}
	case tuple:
		if v, ok := indexSeq(x, key); ok {
			return v, nil
		}
	case string:
		if i, ok := asInt(key); ok {
			rs := []rune(x)
			if i < 0 {
				i += int64(len(rs))
			}
			if i >= 0 && i < int64(len(rs)) {
				return string(rs[i]), nil
			}
		}
	}
	if s, ok := key.(string); ok {
		return getAttr(obj, s)
	}
	return &undefined{obj: obj, hasObj: true, name: toStr(key),
		hint: fmt.Sprintf("%s has no element %s", pyRepr(typeName(obj)+" object"), repr(key))}, nil
}

func indexSeq(items []any, key any) (any, bool) {
	i, ok := asInt(key)
	if !ok {
		return nil, false
	}
	if i < 0 {
		i += int64(len(items))
	}
	if i < 0 || i >= int64(len(items)) {
		return nil, false
	}
	return items[i], true
}

func method(name string, fn func(r *renderer, args []any, kw *Map) (any, error)) *callable {
	return &callable{name: name, fn: fn}
}

// unsafeMethod is what the immutable sandbox returns for methods that
// would modify a list or dict: calling it fails.
func unsafeMethod(obj any, name string) *undefined {
	return &undefined{obj: obj, hasObj: true, name: name,
		hint: fmt.Sprintf("access to attribute '%s' of '%s' object is unsafe.", name, typeName(obj))}
}

// argParser binds positional and keyword arguments to parameter names.
type argParser struct {
	fname  string
	values []any
	set    []bool
}

func bindArgs(fname string, names []string, required int, args []any, kw *Map) (*argParser, error) {
	p := &argParser{fname: fname, values: make([]any, len(names)), set: make([]bool, len(names))}
	if len(args) > len(names) {
		return nil, &Error{Message: fmt.Sprintf("%s() takes at most %d arguments (%d given)", fname, len(names), len(args))}
	}
	for i, a := range args {
		p.values[i], p.set[i] = a, true
	}
	if kw != nil {
		for i, k := range kw.keys {
			ks, _ := k.(string)
			j := -1
			for n, name := range names {
				if name == ks {
					j = n
				}
			}
			if j < 0 {
				return nil, &Error{Message: fmt.Sprintf("%s() got an unexpected keyword argument '%s'", fname, ks)}
			}
			if p.set[j] {
				return nil, &Error{Message: fmt.Sprintf("%s() got multiple values for argument '%s'", fname, ks)}
			}
			p.values[j], p.set[j] = kw.vals[i], true
		}
	}
	for i := range required {
		if !p.set[i] {
			return nil, &Error{Message: fmt.Sprintf("%s() missing required argument '%s'", fname, names[i])}
		}
	}
	return p, nil
}

// get returns argument i, or def when it was not passed.
func (p *argParser) get(i int, def any) any {
	if p.set[i] {
		return p.values[i]
	}
	return def
}

func (p *argParser) has(i int) bool { return p.set[i] }

// str returns argument i as a string (or def when absent or None).
func (p *argParser) str(i int, def string) (string, bool, error) {
	v := p.get(i, nil)
	if v == nil {
		return def, false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", false, &Error{Message: fmt.Sprintf("%s() argument must be str, not %s", p.fname, typeName(v))}
	}
	return s, true, nil
}

func (p *argParser) int(i int, def int64) (int64, error) {
	v := p.get(i, nil)
	if v == nil {
		return def, nil
	}
	n, ok := asInt(v)
	if !ok {
		return 0, &Error{Message: fmt.Sprintf("%s(): '%s' object cannot be interpreted as an integer", p.fname, typeName(v))}
	}
	return n, nil
}

func dictMethod(m *Map, name string) any {
	switch name {
	case "items", "keys", "values":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			if len(args) > 0 || kw.Len() > 0 {
				return nil, &Error{Message: fmt.Sprintf("dict.%s() takes no arguments", name)}
			}
			return viewOf(m, name), nil
		})
	case "get":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			if kw.Len() > 0 || len(args) < 1 || len(args) > 2 {
				return nil, &Error{Message: "get expected 1 or 2 arguments"}
			}
			if _, ok := hashOf(args[0]); !ok {
				return nil, &Error{Message: fmt.Sprintf("unhashable type: '%s'", typeName(args[0]))}
			}
			if v, ok := m.get(args[0]); ok {
				return v, nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			return nil, nil
		})
	case "copy":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) { return m.copy(), nil })
	case "pop", "popitem", "update", "setdefault", "clear":
		return unsafeMethod(m, name)
	}
	return nil
}

func viewOf(m *Map, kind string) *dictView {
	items := make([]any, len(m.keys))
	for i, k := range m.keys {
		switch kind {
		case "items":
			items[i] = tuple{k, m.vals[i]}
		case "keys":
			items[i] = k
		default:
			items[i] = m.vals[i]
		}
	}
	return &dictView{kind: kind, items: items}
}

func listMethod(items []any, name string, mutable bool) any {
	switch name {
	case "index":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			if len(args) < 1 {
				return nil, &Error{Message: "index expected at least 1 argument"}
			}
			for i, it := range items {
				if equal(it, args[0]) {
					return int64(i), nil
				}
			}
			return nil, &Error{Message: fmt.Sprintf("%s is not in list", repr(args[0]))}
		})
	case "count":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			if len(args) != 1 {
				return nil, &Error{Message: "count() takes exactly one argument"}
			}
			n := int64(0)
			for _, it := range items {
				if equal(it, args[0]) {
					n++
				}
			}
			return n, nil
		})
	case "copy":
		if mutable {
			return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
				return append([]any{}, items...), nil
			})
		}
	case "append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear":
		if mutable {
			return unsafeMethod(items, name)
		}
	}
	return nil
}

func stringMethod(s string, name string) any {
	switch name {
	case "strip", "lstrip", "rstrip":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			p, err := bindArgs(name, []string{"chars"}, 0, args, kw)
			if err != nil {
				return nil, err
			}
			chars, has, err := p.str(0, "")
			if err != nil {
				return nil, err
			}
			return pyStrip(s, name, chars, has), nil
		})
	case "split", "rsplit":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			p, err := bindArgs(name, []string{"sep", "maxsplit"}, 0, args, kw)
			if err != nil {
				return nil, err
			}
			sep, has, err := p.str(0, "")
			if err != nil {
				return nil, err
			}
			if has && sep == "" {
				return nil, &Error{Message: "empty separator"}
			}
			maxsplit, err := p.int(1, -1)
			if err != nil {
				return nil, err
			}
			return stringList(pySplit(s, sep, has, int(maxsplit), name == "rsplit")), nil
		})
	case "splitlines":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			p, err := bindArgs(name, []string{"keepends"}, 0, args, kw)
			if err != nil {
				return nil, err
			}
			return stringList(pySplitlines(s, truthy(p.get(0, false)))), nil
		})
	case "startswith", "endswith":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			if kw.Len() > 0 || len(args) < 1 || len(args) > 3 {
				return nil, &Error{Message: name + "() takes 1 to 3 arguments"}
			}
			sub := s
			if len(args) > 1 {
				v, err := sliceValue(s, args[1], at(args, 2), nil)
				if err != nil {
					return nil, err
				}
				sub = v.(string)
			}
			var cands []any
			switch a := args[0].(type) {
			case string:
				cands = []any{a}
			case tuple:
				cands = a
			default:
				return nil, &Error{Message: fmt.Sprintf("%s first arg must be str or a tuple of str, not %s", name, typeName(a))}
			}
			for _, c := range cands {
				cs, ok := c.(string)
				if !ok {
					return nil, &Error{Message: fmt.Sprintf("tuple for %s must only contain str, not %s", name, typeName(c))}
				}
				if name == "startswith" && strings.HasPrefix(sub, cs) || name == "endswith" && strings.HasSuffix(sub, cs) {
					return true, nil
				}
			}
			return false, nil
		})
	case "upper", "lower", "title", "capitalize", "swapcase", "casefold":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			switch name {
			case "upper":
				return pyUpper(s), nil
			case "lower", "casefold":
				return strings.ToLower(s), nil
			case "title":
				return pyTitle(s), nil
			case "capitalize":
				return pyCapitalize(s), nil
			}
			return strings.Map(func(r rune) rune {
				if unicode.IsUpper(r) {
					return unicode.ToLower(r)
				}
				return unicode.ToUpper(r)
			}, s), nil
		})
	case "isdigit", "isdecimal", "isnumeric", "isalpha", "isalnum", "isspace", "islower", "isupper", "istitle", "isidentifier":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			return stringPredicate(name, s), nil
		})
	case "replace":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			p, err := bindArgs(name, []string{"old", "new", "count"}, 2, args, kw)
			if err != nil {
				return nil, err
			}
			old, _, err := p.str(0, "")
			if err != nil {
				return nil, err
			}
			repl, _, err := p.str(1, "")
			if err != nil {
				return nil, err
			}
			n, err := p.int(2, -1)
			if err != nil {
				return nil, err
			}
			return pyReplace(s, old, repl, int(n))
		})
	case "find", "rfind", "index", "rindex", "count":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			if kw.Len() > 0 || len(args) < 1 || len(args) > 3 {
				return nil, &Error{Message: name + "() takes 1 to 3 arguments"}
			}
			sub, ok := args[0].(string)
			if !ok {
				return nil, &Error{Message: fmt.Sprintf("must be str, not %s", typeName(args[0]))}
			}
			return pyFind(name, s, sub, at(args, 1), at(args, 2))
		})
	case "join":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			if len(args) != 1 {
				return nil, &Error{Message: "join() takes exactly one argument"}
			}
			items, err := iterate(args[0])
			if err != nil {
				return nil, err
			}
			parts := make([]string, len(items))
			for i, it := range items {
				str, ok := it.(string)
				if !ok {
					return nil, &Error{Message: fmt.Sprintf("sequence item %d: expected str instance, %s found", i, typeName(it))}
				}
				parts[i] = str
			}
			return strings.Join(parts, s), nil
		})
	case "format":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			return strFormat(s, args, kw)
		})
	case "zfill", "center", "ljust", "rjust":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			p, err := bindArgs(name, []string{"width", "fillchar"}, 1, args, kw)
			if err != nil {
				return nil, err
			}
			w, err := p.int(0, 0)
			if err != nil {
				return nil, err
			}
			fill, _, err := p.str(1, " ")
			if err != nil {
				return nil, err
			}
			return pad(name, s, int(min(w, maxOutputSize)), fill), nil
		})
	case "partition", "rpartition":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			if len(args) != 1 {
				return nil, &Error{Message: name + "() takes exactly one argument"}
			}
			sep, ok := args[0].(string)
			if !ok || sep == "" {
				return nil, &Error{Message: "empty or non-string separator"}
			}
			var i int
			if name == "partition" {
				i = strings.Index(s, sep)
			} else {
				i = strings.LastIndex(s, sep)
			}
			if i < 0 {
				if name == "partition" {
					return tuple{s, "", ""}, nil
				}
				return tuple{"", "", s}, nil
			}
			return tuple{s[:i], sep, s[i+len(sep):]}, nil
		})
	case "removeprefix", "removesuffix":
		return method(name, func(r *renderer, args []any, kw *Map) (any, error) {
			if len(args) != 1 {
				return nil, &Error{Message: name + "() takes exactly one argument"}
			}
			a, ok := args[0].(string)
			if !ok {
				return nil, &Error{Message: fmt.Sprintf("%s() argument must be str, not %s", name, typeName(args[0]))}
			}
			if name == "removeprefix" {
				return strings.TrimPrefix(s, a), nil
			}
			return strings.TrimSuffix(s, a), nil
		})
	}
	return nil
}

func at(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return nil
}

func stringList(parts []string) []any {
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}
