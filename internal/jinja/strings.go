package jinja

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Python str semantics: indexes count code points, whitespace is
// str.isspace, case mappings follow str.upper/lower/title.

func isPrintable(r rune) bool { return unicode.IsPrint(r) }

func pyStrip(s, which, chars string, has bool) string {
	cut := isPySpace
	if has {
		cut = func(r rune) bool { return strings.ContainsRune(chars, r) }
	}
	switch which {
	case "lstrip":
		return strings.TrimLeftFunc(s, cut)
	case "rstrip":
		return strings.TrimRightFunc(s, cut)
	}
	return strings.TrimFunc(s, cut)
}

func pySplit(s, sep string, hasSep bool, maxsplit int, right bool) []string {
	if hasSep {
		if maxsplit < 0 {
			return strings.Split(s, sep)
		}
		if !right {
			return strings.SplitN(s, sep, maxsplit+1)
		}
		var out []string
		for len(out) < maxsplit {
			i := strings.LastIndex(s, sep)
			if i < 0 {
				break
			}
			out = append(out, s[i+len(sep):])
			s = s[:i]
		}
		out = append(out, s)
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
		return out
	}
	out := []string{}
	if !right {
		for {
			s = strings.TrimLeftFunc(s, isPySpace)
			if s == "" {
				return out
			}
			if maxsplit >= 0 && len(out) == maxsplit {
				return append(out, s)
			}
			i := strings.IndexFunc(s, isPySpace)
			if i < 0 {
				return append(out, s)
			}
			out = append(out, s[:i])
			s = s[i:]
		}
	}
	for {
		s = strings.TrimRightFunc(s, isPySpace)
		if s == "" {
			break
		}
		if maxsplit >= 0 && len(out) == maxsplit {
			out = append(out, s)
			break
		}
		i := strings.LastIndexFunc(s, isPySpace)
		if i < 0 {
			out = append(out, s)
			break
		}
		_, size := firstRune(s[i:])
		out = append(out, s[i+size:])
		s = s[:i]
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func firstRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }

func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// pySplitlines is str.splitlines.
func pySplitlines(s string, keepends bool) []string {
	var out []string
	rs := []rune(s)
	start := 0
	for i := 0; i < len(rs); i++ {
		if !isLineBreak(rs[i]) {
			continue
		}
		end := i + 1
		if rs[i] == '\r' && i+1 < len(rs) && rs[i+1] == '\n' {
			end++
		}
		if keepends {
			out = append(out, string(rs[start:end]))
		} else {
			out = append(out, string(rs[start:i]))
		}
		start = end
		i = end - 1
	}
	if start < len(rs) {
		out = append(out, string(rs[start:]))
	}
	return out
}

func pyUpper(s string) string {
	return strings.ReplaceAll(strings.ToUpper(s), "ß", "SS")
}

func isCased(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) }

// pyTitle is str.title.
func pyTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for _, r := range s {
		if prevCased {
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(unicode.ToTitle(r))
		}
		prevCased = isCased(r)
	}
	return b.String()
}

// pyCapitalize is str.capitalize.
func pyCapitalize(s string) string {
	for i, r := range s {
		return string(unicode.ToTitle(r)) + strings.ToLower(s[i+len(string(r)):])
	}
	return s
}

// jinjaTitle is the title filter: words begin after "-", whitespace and
// opening brackets.
func jinjaTitle(s string) string {
	var b strings.Builder
	start := true
	for _, r := range s {
		sep := r == '-' || r == '(' || r == '{' || r == '[' || r == '<' || isPySpace(r)
		switch {
		case sep:
			b.WriteRune(r)
		case start:
			b.WriteString(pyUpper(string(r)))
		default:
			b.WriteRune(unicode.ToLower(r))
		}
		start = sep
	}
	return b.String()
}

func stringPredicate(name, s string) bool {
	if s == "" {
		return false
	}
	all := func(f func(rune) bool) bool {
		for _, r := range s {
			if !f(r) {
				return false
			}
		}
		return true
	}
	switch name {
	case "isdigit", "isdecimal":
		return all(unicode.IsDigit)
	case "isnumeric":
		return all(unicode.IsNumber)
	case "isalpha":
		return all(unicode.IsLetter)
	case "isalnum":
		return all(func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) })
	case "isspace":
		return all(isPySpace)
	case "islower", "isupper":
		cased := false
		for _, r := range s {
			if unicode.IsUpper(r) || unicode.IsTitle(r) {
				if name == "islower" {
					return false
				}
				cased = true
			} else if unicode.IsLower(r) {
				if name == "isupper" {
					return false
				}
				cased = true
			}
		}
		return cased
	case "istitle":
		return pyTitle(s) == s && strings.ContainsFunc(s, isCased)
	case "isidentifier":
		for i, r := range s {
			if !(r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
				return false
			}
		}
		return true
	}
	return false
}

// pyReplace is str.replace, counting code points for an empty old string.
func pyReplace(s, old, repl string, n int) (any, error) {
	if old == "" {
		count := runeCount(s) + 1
		if n >= 0 && n < count {
			count = n
		}
		if len(repl)*count+len(s) > maxOutputSize {
			return nil, &Error{Message: "string too large"}
		}
	} else if strings.Count(s, old)*len(repl) > maxOutputSize {
		return nil, &Error{Message: "string too large"}
	}
	return strings.Replace(s, old, repl, n), nil
}

// pyFind implements find, rfind, index, rindex and count.
func pyFind(name, s, sub string, start, end any) (any, error) {
	rs := []rune(s)
	lo, hi, _, err := sliceIndices(len(rs), start, end, nil)
	if err != nil {
		return nil, err
	}
	if name == "count" {
		if lo > len(rs) || (hi < lo && sub == "") {
			return int64(0), nil
		}
		if hi < lo {
			return int64(0), nil
		}
		part := string(rs[lo:hi])
		if sub == "" {
			return int64(hi - lo + 1), nil
		}
		return int64(strings.Count(part, sub)), nil
	}
	idx := -1
	if lo <= hi && lo <= len(rs) {
		part := string(rs[lo:hi])
		var bi int
		if name == "find" || name == "index" {
			bi = strings.Index(part, sub)
		} else {
			bi = strings.LastIndex(part, sub)
		}
		if bi >= 0 {
			idx = lo + runeCount(part[:bi])
		}
	}
	if idx < 0 && (name == "index" || name == "rindex") {
		return nil, &Error{Message: "substring not found"}
	}
	return int64(idx), nil
}

func pad(name, s string, width int, fill string) string {
	n := runeCount(s)
	if width <= n {
		return s
	}
	marg := width - n
	if name == "zfill" {
		sign := ""
		if s != "" && (s[0] == '+' || s[0] == '-') {
			sign, s = s[:1], s[1:]
		}
		return sign + strings.Repeat("0", marg) + s
	}
	f := []rune(fill)
	if len(f) != 1 {
		f = []rune{' '}
	}
	fs := string(f)
	switch name {
	case "ljust":
		return s + strings.Repeat(fs, marg)
	case "rjust":
		return strings.Repeat(fs, marg) + s
	}
	left := marg/2 + (marg & width & 1)
	return strings.Repeat(fs, left) + s + strings.Repeat(fs, marg-left)
}

// strFormat implements str.format with positional and keyword fields,
// attribute and index lookups, !r/!s conversions and format specs.
func strFormat(format string, args []any, kw *Map) (any, error) {
	var b strings.Builder
	auto := 0
	rs := []rune(format)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		if c == '}' {
			if i+1 < len(rs) && rs[i+1] == '}' {
				b.WriteRune('}')
				i++
				continue
			}
			return nil, &Error{Message: "Single '}' encountered in format string"}
		}
		if c != '{' {
			b.WriteRune(c)
			continue
		}
		if i+1 < len(rs) && rs[i+1] == '{' {
			b.WriteRune('{')
			i++
			continue
		}
		depth := 1
		j := i + 1
		for j < len(rs) && depth > 0 {
			switch rs[j] {
			case '{':
				depth++
			case '}':
				depth--
			}
			j++
		}
		if depth != 0 {
			return nil, &Error{Message: "expected '}' before end of string"}
		}
		field := string(rs[i+1 : j-1])
		i = j - 1
		spec := ""
		if k := strings.IndexByte(field, ':'); k >= 0 {
			field, spec = field[:k], field[k+1:]
		}
		conv := ""
		if k := strings.IndexByte(field, '!'); k >= 0 {
			field, conv = field[:k], field[k+1:]
		}
		// The first part of the field name ends at "." or "[".
		k := strings.IndexAny(field, ".[")
		if k < 0 {
			k = len(field)
		}
		first, rest := field[:k], field[k:]
		var v any
		switch {
		case first == "":
			if auto >= len(args) {
				return nil, &Error{Message: fmt.Sprintf("Replacement index %d out of range for positional args tuple", auto)}
			}
			v = args[auto]
			auto++
		case first[0] >= '0' && first[0] <= '9':
			n, err := strconv.Atoi(first)
			if err != nil || n >= len(args) {
				return nil, &Error{Message: fmt.Sprintf("Replacement index %s out of range for positional args tuple", first)}
			}
			v = args[n]
		default:
			val, ok := kw.get(first)
			if !ok {
				return nil, &Error{Message: "KeyError: " + pyRepr(first)}
			}
			v = val
		}
		for rest != "" {
			var err error
			if rest[0] == '.' {
				e := strings.IndexAny(rest[1:], ".[")
				if e < 0 {
					e = len(rest) - 1
				}
				if v, err = getAttr(v, rest[1:1+e]); err != nil {
					return nil, err
				}
				rest = rest[1+e:]
				continue
			}
			e := strings.IndexByte(rest, ']')
			if e < 0 {
				return nil, &Error{Message: "Missing ']' in format string"}
			}
			key := rest[1:e]
			var kv any = key
			if n, err := strconv.Atoi(key); err == nil {
				kv = int64(n)
			}
			if v, err = getItem(v, kv); err != nil {
				return nil, err
			}
			rest = rest[e+1:]
		}
		switch conv {
		case "r", "a":
			v = repr(v)
		case "s":
			v = toStr(v)
		case "":
		default:
			return nil, &Error{Message: "Unknown conversion specifier " + conv}
		}
		if strings.Contains(spec, "{") {
			inner, err := strFormat(spec, args[min(auto, len(args)):], kw)
			if err != nil {
				return nil, err
			}
			spec = inner.(string)
		}
		s, err := formatSpec(v, spec)
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// formatSpec is format(value, spec) for str, int, float and bool values.
func formatSpec(v any, spec string) (string, error) {
	if u, ok := v.(*undefined); ok && spec == "" {
		return toStr(u), nil
	}
	rs := []rune(spec)
	i := 0
	fill, align := ' ', rune(0)
	if len(rs) >= 2 && strings.ContainsRune("<>=^", rs[1]) {
		fill, align = rs[0], rs[1]
		i = 2
	} else if len(rs) >= 1 && strings.ContainsRune("<>=^", rs[0]) {
		align = rs[0]
		i = 1
	}
	sign := rune(0)
	if i < len(rs) && strings.ContainsRune("+- ", rs[i]) {
		sign = rs[i]
		i++
	}
	alt := false
	if i < len(rs) && rs[i] == '#' {
		alt = true
		i++
	}
	if i < len(rs) && rs[i] == '0' {
		if align == 0 {
			fill, align = '0', '='
		}
		i++
	}
	width := 0
	for i < len(rs) && rs[i] >= '0' && rs[i] <= '9' {
		width = width*10 + int(rs[i]-'0')
		i++
		if width > maxOutputSize {
			return "", &Error{Message: "format width too large"}
		}
	}
	grouping := rune(0)
	if i < len(rs) && (rs[i] == ',' || rs[i] == '_') {
		grouping = rs[i]
		i++
	}
	prec := -1
	if i < len(rs) && rs[i] == '.' {
		i++
		prec = 0
		for i < len(rs) && rs[i] >= '0' && rs[i] <= '9' {
			prec = prec*10 + int(rs[i]-'0')
			i++
		}
		prec = min(prec, 1000)
	}
	typ := rune(0)
	if i < len(rs) {
		typ = rs[i]
		i++
	}
	if i != len(rs) {
		return "", &Error{Message: "Invalid format specifier"}
	}
	var body string
	negative := false
	numeric := true
	switch x := v.(type) {
	case string:
		numeric = false
		if typ != 0 && typ != 's' {
			return "", &Error{Message: fmt.Sprintf("Unknown format code '%c' for object of type 'str'", typ)}
		}
		body = x
		if prec >= 0 && runeCount(body) > prec {
			body = string([]rune(body)[:prec])
		}
	case bool, int64:
		n, _ := asInt(x)
		if _, isBool := x.(bool); isBool && typ == 0 {
			numeric = false
			body = toStr(x)
			break
		}
		negative = n < 0
		u := uint64(absInt(n))
		switch typ {
		case 0, 'd', 'n':
			body = strconv.FormatUint(u, 10)
		case 'x', 'X', 'o', 'b':
			base := map[rune]int{'x': 16, 'X': 16, 'o': 8, 'b': 2}[typ]
			body = strconv.FormatUint(u, base)
			if typ == 'X' {
				body = strings.ToUpper(body)
			}
			if alt {
				body = "0" + strings.ToLower(string(typ)) + body
				if typ == 'X' {
					body = "0X" + body[2:]
				}
			}
		case 'c':
			numeric = false
			body = string(rune(n))
		case 'e', 'E', 'f', 'F', 'g', 'G', '%':
			return formatSpec(float64(n), spec)
		default:
			return "", &Error{Message: fmt.Sprintf("Unknown format code '%c' for object of type 'int'", typ)}
		}
	case float64:
		negative = math.Signbit(x)
		f := math.Abs(x)
		switch typ {
		case 0:
			if prec < 0 {
				body = formatFloat(f)
			} else {
				body = pyGeneral(f, prec, true)
			}
		case 'f', 'F':
			if prec < 0 {
				prec = 6
			}
			body = strconv.FormatFloat(f, 'f', prec, 64)
		case 'e', 'E':
			if prec < 0 {
				prec = 6
			}
			body = fixExponent(strconv.FormatFloat(f, 'e', prec, 64))
			if typ == 'E' {
				body = strings.ToUpper(body)
			}
		case 'g', 'G':
			if prec < 0 {
				prec = 6
			}
			body = pyGeneral(f, prec, false)
			if typ == 'G' {
				body = strings.ToUpper(body)
			}
		case '%':
			if prec < 0 {
				prec = 6
			}
			body = strconv.FormatFloat(f*100, 'f', prec, 64) + "%"
		default:
			return "", &Error{Message: fmt.Sprintf("Unknown format code '%c' for object of type 'float'", typ)}
		}
		if math.IsInf(f, 0) {
			body = "inf"
		} else if math.IsNaN(f) {
			body = "nan"
		}
	default:
		if spec != "" {
			return "", &Error{Message: fmt.Sprintf("unsupported format string passed to %s.__format__", typeName(v))}
		}
		return toStr(v), nil
	}
	prefix := ""
	if numeric {
		if grouping != 0 {
			body = group(body, grouping)
		}
		switch {
		case negative:
			prefix = "-"
		case sign == '+':
			prefix = "+"
		case sign == ' ':
			prefix = " "
		}
	}
	if align == 0 {
		align = '<'
		if numeric {
			align = '>'
		}
	}
	n := runeCount(prefix + body)
	if width <= n {
		return prefix + body, nil
	}
	padding := width - n
	fs := string(fill)
	switch align {
	case '<':
		return prefix + body + strings.Repeat(fs, padding), nil
	case '>':
		return strings.Repeat(fs, padding) + prefix + body, nil
	case '=':
		return prefix + strings.Repeat(fs, padding) + body, nil
	}
	left := padding / 2
	return strings.Repeat(fs, left) + prefix + body + strings.Repeat(fs, padding-left), nil
}

// group inserts thousands separators into the integer part of a number.
func group(body string, sep rune) string {
	end := strings.IndexFunc(body, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(body)
	}
	digits := body[:end]
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteRune(sep)
		}
		b.WriteRune(d)
	}
	return b.String() + body[end:]
}

// fixExponent turns Go's "e+5" exponents into Python's two-digit "e+05".
func fixExponent(s string) string {
	i := strings.LastIndexAny(s, "eE")
	if i < 0 || i+2 >= len(s) {
		return s
	}
	if len(s)-(i+2) < 2 {
		return s[:i+2] + "0" + s[i+2:]
	}
	return s
}

// pyGeneral formats like Python's "g" (or the empty type with a
// precision, which keeps at least one fractional digit, when repr is true).
func pyGeneral(f float64, prec int, repr bool) string {
	if prec == 0 {
		prec = 1
	}
	if f == 0 {
		if repr {
			return "0.0"
		}
		return "0"
	}
	e := strconv.FormatFloat(f, 'e', prec-1, 64)
	mant, expS, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expS)
	if exp >= -4 && exp < prec {
		s := strconv.FormatFloat(f, 'f', max(prec-1-exp, 0), 64)
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		if repr && !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	if strings.Contains(mant, ".") {
		mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
	}
	return fixExponent(mant + "e" + expS)
}
