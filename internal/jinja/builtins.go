package jinja

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxRange is the sandbox's limit on the length of range().
const maxRange = 100000

// builtinGlobal returns the global function of that name, or nil. Render's
// vars take precedence over these.
func builtinGlobal(name string) any {
	switch name {
	case "range":
		return &callable{name: "range", fn: globalRange}
	case "dict":
		return &callable{name: "dict", fn: globalDict}
	case "namespace":
		return &callable{name: "namespace", fn: func(r *renderer, args []any, kw *Map) (any, error) {
			m, err := globalDict(r, args, kw)
			if err != nil {
				return nil, err
			}
			return &namespace{attrs: m.(*Map)}, nil
		}}
	case "raise_exception":
		return &callable{name: "raise_exception", fn: func(r *renderer, args []any, kw *Map) (any, error) {
			msg := ""
			if len(args) > 0 {
				msg = toStr(args[0])
			}
			return nil, &Error{Message: msg, Raised: true}
		}}
	case "strftime_now":
		return &callable{name: "strftime_now", fn: func(r *renderer, args []any, kw *Map) (any, error) {
			if len(args) != 1 {
				return nil, &Error{Message: "strftime_now() takes exactly one argument"}
			}
			f, ok := args[0].(string)
			if !ok {
				return nil, &Error{Message: "strftime_now() argument must be str"}
			}
			return strftime(time.Now(), f), nil
		}}
	case "cycler":
		return &callable{name: "cycler", fn: func(r *renderer, args []any, kw *Map) (any, error) {
			return newCycler(args), nil
		}}
	case "joiner":
		return &callable{name: "joiner", fn: func(r *renderer, args []any, kw *Map) (any, error) {
			p, err := bindArgs("joiner", []string{"sep"}, 0, args, kw)
			if err != nil {
				return nil, err
			}
			sep := p.get(0, ", ")
			used := false
			return &callable{name: "joiner", fn: func(r *renderer, args []any, kw *Map) (any, error) {
				if !used {
					used = true
					return "", nil
				}
				return sep, nil
			}}, nil
		}}
	}
	return nil
}

func globalRange(r *renderer, args []any, kw *Map) (any, error) {
	if kw.Len() > 0 || len(args) < 1 || len(args) > 3 {
		return nil, &Error{Message: "range expected 1 to 3 integer arguments"}
	}
	var n [3]int64
	for i, a := range args {
		v, ok := asInt(a)
		if !ok {
			return nil, &Error{Message: fmt.Sprintf("'%s' object cannot be interpreted as an integer", typeName(a))}
		}
		n[i] = v
	}
	start, stop, step := int64(0), n[0], int64(1)
	if len(args) >= 2 {
		start, stop = n[0], n[1]
	}
	if len(args) == 3 {
		step = n[2]
	}
	if step == 0 {
		return nil, &Error{Message: "range() arg 3 must not be zero"}
	}
	var count int64
	switch {
	case step > 0 && stop > start:
		count = (stop - start + step - 1) / step
	case step < 0 && stop < start:
		count = (start - stop - step - 1) / -step
	}
	if count > maxRange || count < 0 {
		return nil, &Error{Message: fmt.Sprintf("Range too big. The sandbox blocks ranges larger than MAX_RANGE (%d).", maxRange)}
	}
	out := make([]any, count)
	for i := range out {
		out[i] = start + int64(i)*step
	}
	return out, nil
}

// globalDict is Python's dict(mapping_or_pairs, **kwargs).
func globalDict(r *renderer, args []any, kw *Map) (any, error) {
	m := NewMap()
	if len(args) > 1 {
		return nil, &Error{Message: fmt.Sprintf("dict expected at most 1 argument, got %d", len(args))}
	}
	if len(args) == 1 {
		switch src := args[0].(type) {
		case *Map:
			m = src.copy()
		default:
			items, err := iterate(src)
			if err != nil {
				return nil, err
			}
			for i, it := range items {
				pair, err := iterate(it)
				if err != nil || len(pair) != 2 {
					return nil, &Error{Message: fmt.Sprintf("dictionary update sequence element #%d has wrong length", i)}
				}
				if _, ok := hashOf(pair[0]); !ok {
					return nil, &Error{Message: fmt.Sprintf("unhashable type: '%s'", typeName(pair[0]))}
				}
				m.set(pair[0], pair[1])
			}
		}
	}
	for i, k := range kw.keys {
		m.set(k, kw.vals[i])
	}
	return m, nil
}

func newCycler(items []any) *namespace {
	ns := &namespace{attrs: NewMap()}
	pos := 0
	current := func() any {
		if len(items) == 0 {
			return &undefined{hint: "cycler has no items"}
		}
		return items[pos]
	}
	ns.attrs.set("current", current())
	ns.attrs.set("next", &callable{name: "next", fn: func(r *renderer, args []any, kw *Map) (any, error) {
		if len(items) == 0 {
			return nil, &Error{Message: "cycler has no items"}
		}
		v := items[pos]
		pos = (pos + 1) % len(items)
		ns.attrs.set("current", current())
		return v, nil
	}})
	ns.attrs.set("reset", &callable{name: "reset", fn: func(r *renderer, args []any, kw *Map) (any, error) {
		pos = 0
		ns.attrs.set("current", current())
		return nil, nil
	}})
	return ns
}

// strftime formats t like C's strftime in the C locale, including glibc's
// "-" flag (no padding) such as "%-d".
func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		noPad := false
		if format[i] == '-' && i+1 < len(format) {
			noPad = true
			i++
		}
		num := func(v, width int) {
			s := strconv.Itoa(v)
			if !noPad {
				for len(s) < width {
					s = "0" + s
				}
			}
			b.WriteString(s)
		}
		switch format[i] {
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'c':
			b.WriteString(t.Format("Mon Jan  2 15:04:05 2006"))
		case 'd':
			num(t.Day(), 2)
		case 'e':
			if noPad {
				num(t.Day(), 1)
			} else {
				fmt.Fprintf(&b, "%2d", t.Day())
			}
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'H':
			num(t.Hour(), 2)
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			num(h, 2)
		case 'j':
			num(t.YearDay(), 3)
		case 'm':
			num(int(t.Month()), 2)
		case 'M':
			num(t.Minute(), 2)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'S':
			num(t.Second(), 2)
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case 'D':
			b.WriteString(t.Format("01/02/06"))
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			num(wd, 1)
		case 'w':
			num(int(t.Weekday()), 1)
		case 'y':
			num(t.Year()%100, 2)
		case 'Y':
			num(t.Year(), 1)
		case 'Z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'x':
			b.WriteString(t.Format("01/02/06"))
		case 'X':
			b.WriteString(t.Format("15:04:05"))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			if noPad {
				b.WriteByte('-')
			}
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
