package jinja

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenKind classifies a token of the template source.
type tokenKind int

const (
	tokEOF        tokenKind = iota
	tokData                 // literal text outside tags
	tokVarBegin             // {{
	tokVarEnd               // }}
	tokBlockBegin           // {%
	tokBlockEnd             // %}
	tokName
	tokString
	tokInt
	tokFloat
	tokOp // operators and punctuation; the text is in val
)

// token is one lexical unit; val holds the text of data, names and
// operators, the decoded value of strings, and num/fnum for numbers.
type token struct {
	kind tokenKind
	val  string
	num  int64
	fnum float64
	line int
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of template"
	case tokData:
		return "template data"
	case tokVarBegin:
		return "begin of print statement"
	case tokVarEnd:
		return "end of print statement"
	case tokBlockBegin:
		return "begin of statement block"
	case tokBlockEnd:
		return "end of statement block"
	case tokString:
		return "string"
	case tokInt:
		return "integer"
	case tokFloat:
		return "float"
	}
	return t.val
}

// lexer turns template source into tokens, applying the whitespace rules of
// Jinja2 configured with trim_blocks and lstrip_blocks.
type lexer struct {
	src    string
	pos    int
	line   int
	toks   []token
	lstart bool // the previous match ended with a newline (Jinja's line_starting)
}

// operators, longest first so that "//" wins over "/".
var operators = []string{
	"//", "**", "==", "!=", ">=", "<=",
	"+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}",
	">", "<", "=", ".", ":", "|", ",", ";",
}

// tokenize lexes the whole source.
func tokenize(source string) ([]token, error) {
	// Jinja normalizes every newline sequence to \n and, without
	// keep_trailing_newline, drops one trailing newline.
	source = strings.ReplaceAll(source, "\r\n", "\n")
	source = strings.ReplaceAll(source, "\r", "\n")
	source = strings.TrimSuffix(source, "\n")
	lx := &lexer{src: source, line: 1, lstart: true}
	if err := lx.run(); err != nil {
		return nil, err
	}
	lx.toks = append(lx.toks, token{kind: tokEOF, line: lx.line})
	return lx.toks, nil
}

func (lx *lexer) errorf(line int, format string, args ...any) error {
	return newSyntaxError(line, format, args...)
}

func (lx *lexer) emit(kind tokenKind, val string, line int) {
	lx.toks = append(lx.toks, token{kind: kind, val: val, line: line})
}

// advance moves pos to p, counting newlines.
func (lx *lexer) advance(p int) {
	lx.line += strings.Count(lx.src[lx.pos:p], "\n")
	lx.pos = p
}

func (lx *lexer) run() error {
	for lx.pos < len(lx.src) {
		rest := lx.src[lx.pos:]
		start := findTagStart(rest)
		if start < 0 {
			lx.emit(tokData, rest, lx.line)
			lx.advance(len(lx.src))
			return nil
		}
		text := rest[:start]
		tag := rest[start : start+2]
		after := start + 2
		sign := byte(0)
		if after < len(rest) && (rest[after] == '-' || rest[after] == '+') {
			sign = rest[after]
			after++
		}
		rawEnd := -1
		if tag == "{%" {
			rawEnd = matchRawBegin(rest[after:])
		}
		isBlockish := tag != "{{"
		text = lx.stripBefore(text, sign, isBlockish)
		if text != "" {
			lx.emit(tokData, text, lx.line)
		}
		lx.advance(lx.pos + start)
		line := lx.line
		lx.advance(lx.pos + after - start)
		lx.lstart = false
		switch {
		case rawEnd >= 0:
			lx.advance(lx.pos + rawEnd)
			lx.lstart = lx.src[lx.pos-1] == '\n'
			if err := lx.lexRaw(line); err != nil {
				return err
			}
		case tag == "{#":
			if err := lx.lexComment(line); err != nil {
				return err
			}
		case tag == "{%":
			lx.emit(tokBlockBegin, "{%", line)
			if err := lx.lexTag(false); err != nil {
				return err
			}
		default:
			lx.emit(tokVarBegin, "{{", line)
			if err := lx.lexTag(true); err != nil {
				return err
			}
		}
	}
	return nil
}

// findTagStart returns the index of the first "{{", "{%" or "{#", or -1.
func findTagStart(s string) int {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '{' {
			switch s[i+1] {
			case '{', '%', '#':
				return i
			}
		}
	}
	return -1
}

// stripBefore applies "-" stripping and lstrip_blocks to the text that
// precedes a tag.
func (lx *lexer) stripBefore(text string, sign byte, blockish bool) string {
	if sign == '-' {
		return strings.TrimRightFunc(text, isPySpace)
	}
	if sign == '+' || !blockish {
		return text
	}
	lpos := strings.LastIndexByte(text, '\n') + 1
	if lpos > 0 || lx.lstart {
		tail := text[lpos:]
		if tail != "" && strings.TrimLeftFunc(tail, isPySpace) == "" {
			return text[:lpos]
		}
	}
	return text
}

// matchRawBegin reports whether s (just after "{%" and its sign) continues
// "\s*raw\s*(-%}\s*|%})"; it returns the length of that match or -1.
func matchRawBegin(s string) int {
	i := skipSpace(s, 0)
	if !strings.HasPrefix(s[i:], "raw") {
		return -1
	}
	i += 3
	j := skipSpace(s, i)
	if j == i && j < len(s) && isNameChar(rune(s[j])) {
		return -1
	}
	i = j
	switch {
	case strings.HasPrefix(s[i:], "-%}"):
		return skipSpace(s, i+3)
	case strings.HasPrefix(s[i:], "%}"):
		return i + 2
	}
	return -1
}

// lexRaw reads the body of {% raw %} up to and including {% endraw %}.
func (lx *lexer) lexRaw(line int) error {
	rest := lx.src[lx.pos:]
	for off := 0; ; {
		k := strings.Index(rest[off:], "{%")
		if k < 0 {
			return lx.errorf(line, "Missing end of raw directive")
		}
		k += off
		after := k + 2
		sign := byte(0)
		if after < len(rest) && (rest[after] == '-' || rest[after] == '+') {
			sign = rest[after]
			after++
		}
		i := skipSpace(rest, after)
		if strings.HasPrefix(rest[i:], "endraw") {
			j := skipSpace(rest, i+6)
			end := -1
			switch {
			case strings.HasPrefix(rest[j:], "+%}"):
				end = j + 3
			case strings.HasPrefix(rest[j:], "-%}"):
				end = skipSpace(rest, j+3)
			case strings.HasPrefix(rest[j:], "%}"):
				end = j + 2
				if end < len(rest) && rest[end] == '\n' {
					end++
				}
			}
			if end >= 0 {
				text := lx.stripBefore(rest[:k], sign, true)
				if text != "" {
					lx.emit(tokData, text, lx.line)
				}
				lx.advance(lx.pos + end)
				lx.lstart = end > 0 && rest[end-1] == '\n'
				return nil
			}
		}
		off = k + 2
	}
}

// lexComment skips a comment up to its end, with trim_blocks.
func (lx *lexer) lexComment(line int) error {
	rest := lx.src[lx.pos:]
	k := strings.Index(rest, "#}")
	if k < 0 {
		return lx.errorf(line, "Missing end of comment tag")
	}
	end := k + 2
	switch {
	case k > 0 && rest[k-1] == '-':
		end = skipSpace(rest, end)
	case k > 0 && rest[k-1] == '+':
	default:
		if end < len(rest) && rest[end] == '\n' {
			end++
		}
	}
	lx.advance(lx.pos + end)
	lx.lstart = end > 0 && rest[end-1] == '\n'
	return nil
}

// lexTag tokenizes the inside of {{ ... }} or {% ... %} up to its end.
func (lx *lexer) lexTag(isVar bool) error {
	depth := 0
	startLine := lx.line
	for {
		if lx.pos >= len(lx.src) {
			if isVar {
				return lx.errorf(startLine, "unexpected end of template, expected 'end of print statement'")
			}
			return lx.errorf(startLine, "unexpected end of template, expected 'end of statement block'")
		}
		rest := lx.src[lx.pos:]
		if depth == 0 {
			if end, ok := matchTagEnd(rest, isVar); ok {
				if isVar {
					lx.emit(tokVarEnd, "}}", lx.line)
				} else {
					lx.emit(tokBlockEnd, "%}", lx.line)
				}
				lx.advance(lx.pos + end)
				lx.lstart = rest[end-1] == '\n'
				return nil
			}
		}
		r, size := utf8.DecodeRuneInString(rest)
		switch {
		case isPySpace(r):
			n := skipSpace(rest, 0)
			lx.advance(lx.pos + n)
		case r >= '0' && r <= '9':
			if err := lx.lexNumber(); err != nil {
				return err
			}
		case r == '_' || unicode.IsLetter(r):
			n := size
			for n < len(rest) {
				c, sz := utf8.DecodeRuneInString(rest[n:])
				if !isNameChar(c) {
					break
				}
				n += sz
			}
			lx.emit(tokName, rest[:n], lx.line)
			lx.advance(lx.pos + n)
		case r == '\'' || r == '"':
			if err := lx.lexString(); err != nil {
				return err
			}
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(rest, o) {
					op = o
					break
				}
			}
			if op == "" {
				return lx.errorf(lx.line, "unexpected char %s at %d", pyRepr(string(r)), lx.pos)
			}
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					return lx.errorf(lx.line, "unexpected '%s'", op)
				}
				depth--
			}
			lx.emit(tokOp, op, lx.line)
			lx.advance(lx.pos + len(op))
		}
	}
}

// matchTagEnd matches the end of a print or statement tag at the start of s
// and returns the length to consume (with "-" stripping and trim_blocks).
func matchTagEnd(s string, isVar bool) (int, bool) {
	if isVar {
		switch {
		case strings.HasPrefix(s, "-}}"):
			return skipSpace(s, 3), true
		case strings.HasPrefix(s, "}}"):
			return 2, true
		}
		return 0, false
	}
	switch {
	case strings.HasPrefix(s, "+%}"):
		return 3, true
	case strings.HasPrefix(s, "-%}"):
		return skipSpace(s, 3), true
	case strings.HasPrefix(s, "%}"):
		if len(s) > 2 && s[2] == '\n' {
			return 3, true
		}
		return 2, true
	}
	return 0, false
}

// lexNumber reads an integer or float literal as Jinja2 does (underscores
// between digits, 0b/0o/0x prefixes, exponents).
func (lx *lexer) lexNumber() error {
	s := lx.src[lx.pos:]
	line := lx.line
	if len(s) > 1 && s[0] == '0' && strings.ContainsRune("bBoOxX", rune(s[1])) {
		base := map[byte]int{'b': 2, 'o': 8, 'x': 16}[s[1]|0x20]
		n := 2
		for n < len(s) && (isDigitIn(s[n], base) || (s[n] == '_' && n+1 < len(s) && isDigitIn(s[n+1], base))) {
			n++
		}
		if n > 2 {
			v, err := strconv.ParseInt(strings.ReplaceAll(s[2:n], "_", ""), base, 64)
			if err != nil {
				return lx.errorf(line, "integer literal too large")
			}
			lx.toks = append(lx.toks, token{kind: tokInt, num: v, val: s[:n], line: line})
			lx.advance(lx.pos + n)
			return nil
		}
	}
	digits := func(i int) int { // reads (\d+_)*\d+ from i; returns end or i
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			if j+1 < len(s) && s[j] == '_' && s[j+1] >= '0' && s[j+1] <= '9' {
				j++
			}
		}
		return j
	}
	n := digits(0)
	isFloat := false
	end := n
	if end+1 < len(s) && s[end] == '.' && s[end+1] >= '0' && s[end+1] <= '9' {
		end = digits(end + 1)
		isFloat = true
	}
	if end < len(s) && (s[end] == 'e' || s[end] == 'E') {
		j := end + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			end = digits(j)
			isFloat = true
		}
	}
	text := strings.ReplaceAll(s[:end], "_", "")
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !isRangeErr(err) {
			return lx.errorf(line, "invalid float literal %q", s[:end])
		}
		lx.toks = append(lx.toks, token{kind: tokFloat, fnum: f, val: s[:end], line: line})
	} else {
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return lx.errorf(line, "integer literal too large")
		}
		lx.toks = append(lx.toks, token{kind: tokInt, num: v, val: s[:end], line: line})
	}
	lx.advance(lx.pos + end)
	return nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func isDigitIn(c byte, base int) bool {
	var v int
	switch {
	case c >= '0' && c <= '9':
		v = int(c - '0')
	case c >= 'a' && c <= 'f':
		v = int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		v = int(c-'A') + 10
	default:
		return false
	}
	return v < base
}

// lexString reads a quoted string literal and decodes its escapes the way
// Python's "unicode-escape" codec does.
func (lx *lexer) lexString() error {
	s := lx.src[lx.pos:]
	q := s[0]
	i := 1
	for i < len(s) && s[i] != q {
		if s[i] == '\\' {
			i++
		}
		i++
	}
	if i >= len(s) {
		return lx.errorf(lx.line, "unexpected char %s at %d", pyRepr(string(q)), lx.pos)
	}
	val, err := unescapeString(s[1:i])
	if err != nil {
		return lx.errorf(lx.line, "%s", err.Error())
	}
	lx.toks = append(lx.toks, token{kind: tokString, val: val, line: lx.line})
	lx.advance(lx.pos + i + 1)
	return nil
}

type escapeError string

func (e escapeError) Error() string { return string(e) }

// unescapeString decodes backslash escapes like Python's unicode-escape.
func unescapeString(s string) (string, error) {
	if !strings.Contains(s, "\\") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		e := s[i+1]
		i += 2
		switch e {
		case '\n':
		case '\\':
			b.WriteByte('\\')
		case '\'':
			b.WriteByte('\'')
		case '"':
			b.WriteByte('"')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(e - '0')
			for k := 0; k < 2 && i < len(s) && s[i] >= '0' && s[i] <= '7'; k++ {
				v = v*8 + int(s[i]-'0')
				i++
			}
			b.WriteRune(rune(v))
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+n > len(s) {
				return "", escapeError("truncated \\" + string(e) + " escape in string literal")
			}
			v, err := strconv.ParseUint(s[i:i+n], 16, 32)
			if err != nil || v > unicode.MaxRune {
				return "", escapeError("invalid \\" + string(e) + " escape in string literal")
			}
			b.WriteRune(rune(v))
			i += n
		case 'N':
			return "", escapeError("\\N{...} escapes are not supported")
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), nil
}

// skipSpace returns the index of the first non-whitespace byte at or after i.
func skipSpace(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isPySpace(r) {
			break
		}
		i += size
	}
	return i
}

// isPySpace reports whether r is whitespace for Python's str.isspace and \s.
func isPySpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85:
		return true
	}
	return r > 0x7f && unicode.IsSpace(r)
}

func isNameChar(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}
