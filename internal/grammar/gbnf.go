package grammar

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrInvalid is wrapped by every error of Check and CheckSchema. The
// backends wrap it too for a grammar llama.cpp cannot parse, or a JSON
// Schema its converter cannot turn into one.
var ErrInvalid = errors.New("grammar: invalid grammar")

// Check parses a GBNF grammar, whose start rule is root, as llama.cpp's
// llama_grammar_parser does (src/llama-grammar.cpp), building the same
// rules, and refuses it where llama.cpp would fail, crash, hang or grow
// without bound:
//
//   - an empty grammar, one over MaxBytes, and one with a NUL byte, where
//     C would end it;
//   - a parse error (llama.cpp would print the whole grammar to stderr),
//     and a root rule that is referenced but not defined, which passes
//     llama.cpp's checks when its references are all under {0} and then
//     makes it index past its rules;
//   - parentheses nested deeper than 512 (maxGrammarNesting):
//     parse_sequence and parse_alternates recurse on each '(' and overflow
//     the stack at about 100,000;
//   - {m,n} with n < m, on which handle_repetitions loops until memory runs
//     out, and repetitions whose copies would take more than 32 MiB
//     (maxGrammarMemory): "a"{2000}{2000}{2000} copies the item 8·10⁹
//     times;
//   - left recursion, counting rules that can match nothing because all
//     they hold can: llama.cpp only detects rules with an empty
//     alternative, and recurses without end on root ::= ("a"?)*;
//   - grammars on which llama.cpp's matcher takes exponential time:
//     llama_grammar_detect_left_recursion and llama_grammar_advance_stack
//     remember nothing, so r0 ::= r1 | r1 "b", r1 ::= r2 | r2 "b", …
//     doubles the work with each rule. Every place the matcher can stand
//     must be left in at most 16,384 steps (maxGrammarAdvance), one way at
//     most of matching nothing, and less than 4096 frames deep
//     (maxGrammarRecursion).
//
// Tokens written <…> are accepted without checking that they are one
// token of the model's vocabulary: llama.cpp refuses them if not.
//
// Its error wraps ErrInvalid and names the first problem found. It calls
// no C and is safe for concurrent use.
func Check(src string) error {
	if src == "" {
		return grammarErr("the grammar is empty")
	}
	if len(src) > MaxBytes {
		return grammarErr("grammar is %d bytes, over %d", len(src), MaxBytes)
	}
	if i := strings.IndexByte(src, 0); i >= 0 {
		return grammarErr("grammar has a NUL byte at offset %d", i)
	}
	p := &gbnfParser{src: src, symbols: map[string]uint32{}}
	if err := p.parse(); err != nil {
		return err
	}
	return p.analyze()
}

const (
	// maxGrammarNesting bounds the nesting of parentheses. The schema
	// converter nests them about as deep as the longest property name
	// (maxKeyBytes) when additionalProperties is set.
	maxGrammarNesting = 512
	// maxGrammarMemory bounds the bytes llama.cpp holds for the parsed
	// rules, repetitions expanded.
	maxGrammarMemory = 32 << 20
	// maxGrammarAdvance bounds the steps llama_grammar_advance_stack takes
	// from one place of the grammar; the alternatives of an enum of 10,000
	// values are 10,000 steps.
	maxGrammarAdvance = 1 << 14
	// maxGrammarRecursion bounds the frames llama_grammar_advance_stack and
	// llama_grammar_detect_left_recursion recurse through.
	maxGrammarRecursion = 4096
	// maxLeftRecursionWork bounds the elements that
	// llama_grammar_detect_left_recursion reads.
	maxLeftRecursionWork = 1 << 24
)

func grammarErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// The element types of llama.h's llama_gretype.
type gtype uint8

const (
	gEnd gtype = iota
	gAlt
	gRef
	gChar
	gCharNot
	gCharRngUpper
	gCharAlt
	gCharAny
	gToken
	gTokenNot
)

type gelem struct {
	typ gtype
	val uint32 // a rule's id for gRef; characters and tokens are not kept
}

// Sizes llama.cpp spends, in bytes: an element of a rule (held twice: by
// the parser and by the grammar), a rule, a symbol beside its name.
const (
	elemBytes   = 16
	ruleBytes   = 48
	symbolBytes = 64
)

type gbnfParser struct {
	src     string
	symbols map[string]uint32 // symbol_ids
	rules   [][]gelem
	memory  int64
	nesting int
}

func (p *gbnfParser) at(i int) byte {
	if i < len(p.src) {
		return p.src[i]
	}
	return 0
}

func (p *gbnfParser) fail(pos int, format string, args ...any) error {
	line := 1 + strings.Count(p.src[:min(pos, len(p.src))], "\n")
	return grammarErr("%s at line %d", fmt.Sprintf(format, args...), line)
}

func (p *gbnfParser) spend(bytes int64) error {
	p.memory += bytes
	if p.memory > maxGrammarMemory {
		return grammarErr("grammar expands to more than %d MiB: lower its {m,n} repetitions", maxGrammarMemory>>20)
	}
	return nil
}

func isWordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || '0' <= c && c <= '9'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (p *gbnfParser) space(pos int, newlineOK bool) int {
	for {
		c := p.at(pos)
		switch {
		case c == '#':
			for p.at(pos) != 0 && p.at(pos) != '\r' && p.at(pos) != '\n' {
				pos++
			}
		case c == ' ' || c == '\t' || newlineOK && (c == '\r' || c == '\n'):
			pos++
		default:
			return pos
		}
	}
}

func (p *gbnfParser) name(pos int) (int, error) {
	end := pos
	for isWordChar(p.at(end)) {
		end++
	}
	if end == pos {
		return 0, p.fail(pos, "expecting name")
	}
	return end, nil
}

func (p *gbnfParser) integer(pos int) (int, uint64, error) {
	end := pos
	for isDigit(p.at(end)) {
		end++
	}
	if end == pos {
		return 0, 0, p.fail(pos, "expecting integer")
	}
	n, err := strconv.ParseUint(p.src[pos:end], 10, 64) // std::stoul
	if err != nil {
		return 0, 0, p.fail(pos, "integer %s out of range", p.src[pos:end])
	}
	return end, n, nil
}

// char follows parse_char and decode_utf8, which reads as many bytes as
// the first one announces, stopping at the end.
func (p *gbnfParser) char(pos int) (int, error) {
	switch c := p.at(pos); {
	case c == '\\':
		size := 0
		switch p.at(pos + 1) {
		case 'x':
			size = 2
		case 'u':
			size = 4
		case 'U':
			size = 8
		case 't', 'r', 'n', '\\', '"', '[', ']':
			return pos + 2, nil
		default:
			return 0, p.fail(pos, "unknown escape")
		}
		end := pos + 2
		for end < pos+2+size && strings.IndexByte("0123456789abcdefABCDEF", p.at(end)) >= 0 && p.at(end) != 0 {
			end++
		}
		if end != pos+2+size {
			return 0, p.fail(pos, "expecting %d hex chars", size)
		}
		return end, nil
	case c != 0:
		n := [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[c>>4]
		end := pos + 1
		for end < pos+n && p.at(end) != 0 {
			end++
		}
		return end, nil
	}
	return 0, p.fail(pos, "unexpected end of input")
}

func (p *gbnfParser) token(pos int) (int, error) {
	if p.at(pos) != '<' {
		return 0, p.fail(pos, "expecting '<'")
	}
	pos++
	if p.at(pos) == '[' {
		end, _, err := p.integer(pos + 1)
		if err != nil {
			return 0, err
		}
		if p.at(end) != ']' || p.at(end+1) != '>' {
			return 0, p.fail(end, "expecting ']>'")
		}
		return end + 2, nil
	}
	for p.at(pos) != 0 && p.at(pos) != '>' {
		pos++
	}
	if p.at(pos) != '>' {
		return 0, p.fail(pos, "expecting '>'")
	}
	return pos + 1, nil
}

// symbol is get_symbol_id: the id of a name, a new one if need be.
func (p *gbnfParser) symbol(name string) (uint32, error) {
	if id, ok := p.symbols[name]; ok {
		return id, nil
	}
	id := uint32(len(p.symbols))
	p.symbols[name] = id
	return id, p.spend(int64(len(name)) + symbolBytes)
}

// generate is generate_symbol_id, which may take the name of a symbol
// already there, and then the same id twice; llama.cpp does the same.
func (p *gbnfParser) generate(base string) (uint32, error) {
	id := uint32(len(p.symbols))
	name := base + "_" + strconv.Itoa(int(id))
	p.symbols[name] = id
	return id, p.spend(int64(len(name)) + symbolBytes)
}

func (p *gbnfParser) addRule(id uint32, rule []gelem) error {
	for uint32(len(p.rules)) <= id {
		p.rules = append(p.rules, nil)
	}
	p.rules[id] = rule
	return p.spend(int64(len(rule))*elemBytes + ruleBytes)
}

func (p *gbnfParser) parse() error {
	pos := p.space(0, true)
	for p.at(pos) != 0 {
		var err error
		if pos, err = p.rule(pos); err != nil {
			return err
		}
	}
	// llama.cpp only checks that "root" is a symbol, then indexes its
	// rules with it: a root that is only referenced, under {0}, is past
	// their end.
	if id, ok := p.symbols["root"]; !ok || int(id) >= len(p.rules) || p.rules[id] == nil {
		return grammarErr("the grammar has no root rule")
	}
	names := make([]string, len(p.rules))
	for name, id := range p.symbols {
		if int(id) < len(names) {
			names[id] = name
		}
	}
	for id, rule := range p.rules {
		if rule == nil {
			return grammarErr("rule %q is used but not defined", names[id])
		}
		for _, e := range rule {
			if e.typ == gRef && (int(e.val) >= len(p.rules) || p.rules[e.val] == nil) {
				for name, id := range p.symbols {
					if id == e.val {
						return grammarErr("rule %q is used but not defined", name)
					}
				}
				return grammarErr("a rule is used but not defined")
			}
		}
	}
	return nil
}

func (p *gbnfParser) rule(pos int) (int, error) {
	end, err := p.name(pos)
	if err != nil {
		return 0, err
	}
	name := p.src[pos:end]
	id, err := p.symbol(name)
	if err != nil {
		return 0, err
	}
	pos = p.space(end, false)
	if p.at(pos) != ':' || p.at(pos+1) != ':' || p.at(pos+2) != '=' {
		return 0, p.fail(pos, "expecting ::=")
	}
	if pos, err = p.alternates(p.space(pos+3, true), name, id, false); err != nil {
		return 0, err
	}
	switch p.at(pos) {
	case '\r':
		pos++
		if p.at(pos) == '\n' {
			pos++
		}
	case '\n':
		pos++
	case 0:
	default:
		return 0, p.fail(pos, "expecting newline or end")
	}
	return p.space(pos, true), nil
}

func (p *gbnfParser) alternates(pos int, name string, id uint32, nested bool) (int, error) {
	var rule []gelem
	pos, err := p.sequence(pos, name, &rule, nested)
	for err == nil && p.at(pos) == '|' {
		rule = append(rule, gelem{typ: gAlt})
		pos, err = p.sequence(p.space(pos+1, true), name, &rule, nested)
	}
	if err != nil {
		return 0, err
	}
	rule = append(rule, gelem{typ: gEnd})
	return pos, p.addRule(id, rule)
}

func (p *gbnfParser) sequence(pos int, name string, rule *[]gelem, nested bool) (int, error) {
	last := len(*rule) // last_sym_start
	var err error
	for p.at(pos) != 0 {
		switch c := p.at(pos); {
		case c == '"':
			pos++
			last = len(*rule)
			for p.at(pos) != '"' {
				if p.at(pos) == 0 {
					return 0, p.fail(pos, "unexpected end of input")
				}
				if pos, err = p.char(pos); err != nil {
					return 0, err
				}
				*rule = append(*rule, gelem{typ: gChar})
			}
			pos = p.space(pos+1, nested)
		case c == '[':
			pos++
			start := gChar
			if p.at(pos) == '^' {
				pos++
				start = gCharNot
			}
			last = len(*rule)
			for p.at(pos) != ']' {
				if p.at(pos) == 0 {
					return 0, p.fail(pos, "unexpected end of input")
				}
				if pos, err = p.char(pos); err != nil {
					return 0, err
				}
				typ := start
				if last < len(*rule) {
					typ = gCharAlt
				}
				*rule = append(*rule, gelem{typ: typ})
				if p.at(pos) == '-' && p.at(pos+1) != ']' {
					if p.at(pos+1) == 0 {
						return 0, p.fail(pos, "unexpected end of input")
					}
					if pos, err = p.char(pos + 1); err != nil {
						return 0, err
					}
					*rule = append(*rule, gelem{typ: gCharRngUpper})
				}
			}
			pos = p.space(pos+1, nested)
		case c == '<' || c == '!':
			typ := gToken
			if c == '!' {
				typ = gTokenNot
				pos++
			}
			if pos, err = p.token(pos); err != nil {
				return 0, err
			}
			last = len(*rule)
			*rule = append(*rule, gelem{typ: typ})
			pos = p.space(pos, nested)
		case isWordChar(c):
			end, _ := p.name(pos)
			id, err := p.symbol(p.src[pos:end])
			if err != nil {
				return 0, err
			}
			pos = p.space(end, nested)
			last = len(*rule)
			*rule = append(*rule, gelem{typ: gRef, val: id})
		case c == '(':
			if p.nesting >= maxGrammarNesting {
				return 0, p.fail(pos, "parentheses nest deeper than %d levels", maxGrammarNesting)
			}
			id, err := p.generate(name)
			if err != nil {
				return 0, err
			}
			p.nesting++
			pos, err = p.alternates(p.space(pos+1, true), name, id, true)
			p.nesting--
			if err != nil {
				return 0, err
			}
			last = len(*rule)
			*rule = append(*rule, gelem{typ: gRef, val: id})
			if p.at(pos) != ')' {
				return 0, p.fail(pos, "expecting ')'")
			}
			pos = p.space(pos+1, nested)
		case c == '.':
			last = len(*rule)
			*rule = append(*rule, gelem{typ: gCharAny})
			pos = p.space(pos+1, nested)
		case c == '*' || c == '+' || c == '?':
			lo, hi := uint64(0), uint64(math.MaxUint64)
			switch c {
			case '+':
				lo = 1
			case '?':
				hi = 1
			}
			pos = p.space(pos+1, nested)
			if err := p.repeat(pos, name, rule, last, lo, hi); err != nil {
				return 0, err
			}
		case c == '{':
			pos = p.space(pos+1, nested)
			if !isDigit(p.at(pos)) {
				return 0, p.fail(pos, "expecting an int")
			}
			end, lo, err := p.integer(pos)
			if err != nil {
				return 0, err
			}
			pos = p.space(end, nested)
			hi := uint64(math.MaxUint64)
			switch p.at(pos) {
			case '}':
				hi = lo
				pos = p.space(pos+1, nested)
			case ',':
				pos = p.space(pos+1, nested)
				if isDigit(p.at(pos)) {
					if end, hi, err = p.integer(pos); err != nil {
						return 0, err
					}
					pos = p.space(end, nested)
				}
				if p.at(pos) != '}' {
					return 0, p.fail(pos, "expecting '}'")
				}
				pos = p.space(pos+1, nested)
			default:
				return 0, p.fail(pos, "expecting ','")
			}
			if lo > maxRepeat || hi != math.MaxUint64 && hi > maxRepeat {
				return 0, p.fail(pos, "repetition over %d", maxRepeat)
			}
			if err := p.repeat(pos, name, rule, last, lo, hi); err != nil {
				return 0, err
			}
		default:
			return pos, nil
		}
	}
	return pos, nil
}

// repeat follows handle_repetitions: S{m,n} becomes m copies of S and
// n-m rules S'(x) ::= S S'(x-1) |, each with its own copy of S.
func (p *gbnfParser) repeat(pos int, name string, rule *[]gelem, last int, lo, hi uint64) error {
	noMax := hi == math.MaxUint64
	if last == len(*rule) {
		return p.fail(pos, "expecting an item before */+/?/{")
	}
	if !noMax && hi < lo {
		return p.fail(pos, "repetition {%d,%d} has its maximum under its minimum", lo, hi)
	}
	prev := append([]gelem(nil), (*rule)[last:]...)
	nOpt := uint64(1)
	if !noMax {
		nOpt = hi - lo
	}
	copies := nOpt * uint64(len(prev)+3)
	if lo > 1 {
		copies += (lo - 1) * uint64(len(prev))
	}
	if copies > maxGrammarMemory/elemBytes {
		return grammarErr("grammar expands to more than %d MiB: lower its {m,n} repetitions", maxGrammarMemory>>20)
	}
	if lo == 0 {
		*rule = (*rule)[:last]
	}
	for i := uint64(1); i < lo; i++ {
		if err := p.spend(int64(len(prev)) * elemBytes); err != nil {
			return err
		}
		*rule = append(*rule, prev...)
	}
	var lastID uint32
	for i := range nOpt {
		id, err := p.generate(name)
		if err != nil {
			return err
		}
		rec := append(make([]gelem, 0, len(prev)+3), prev...)
		if i > 0 || noMax {
			ref := lastID
			if noMax {
				ref = id
			}
			rec = append(rec, gelem{typ: gRef, val: ref})
		}
		rec = append(rec, gelem{typ: gAlt}, gelem{typ: gEnd})
		if err := p.addRule(id, rec); err != nil {
			return err
		}
		lastID = id
	}
	if nOpt > 0 {
		*rule = append(*rule, gelem{typ: gRef, val: lastID})
	}
	return nil
}

// What advancing from a place of the grammar costs, counted as
// llama_grammar_advance_stack recurses: calls, the ways it has of matching
// nothing (and so of going on with the stack below), the frames it goes
// deep, and the depth at which it goes on below (-1 if it cannot).
type advance struct {
	calls, empty uint64
	depth, below int
}

const saturated = 1 << 40

func satAdd(a, b uint64) uint64 { return min(a+b, saturated) }
func satMul(a, b uint64) uint64 {
	if a != 0 && b > saturated/a {
		return saturated
	}
	return min(a*b, saturated)
}

// step is advancing from a reference to a rule whose alternatives together
// cost r, followed by next.
func step(r, next advance) advance {
	a := advance{
		calls: satAdd(1, satAdd(r.calls, satMul(r.empty, next.calls))),
		empty: satMul(r.empty, next.empty),
		depth: 1 + r.depth,
		below: -1,
	}
	if r.empty > 0 {
		a.depth = max(a.depth, 1+r.below+next.depth)
		if next.empty > 0 {
			a.below = 1 + r.below + next.below
		}
	}
	return a
}

var (
	atEnd      = advance{empty: 1}
	atTerminal = advance{calls: 1, depth: 1, below: -1}
)

func (a advance) add(b advance) advance {
	return advance{satAdd(a.calls, b.calls), satAdd(a.empty, b.empty), max(a.depth, b.depth), max(a.below, b.below)}
}

// alts returns the start of each alternative of a rule.
func alts(rule []gelem) []int {
	starts := []int{0}
	for i, e := range rule[:len(rule)-1] {
		if e.typ == gAlt {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func (p *gbnfParser) ruleName(id int) string {
	for name, i := range p.symbols {
		if int(i) == id {
			return name
		}
	}
	return strconv.Itoa(id)
}

// analyze checks the parsed rules for left recursion and for the cost of
// llama.cpp's matcher.
func (p *gbnfParser) analyze() error {
	n := len(p.rules)
	// Which rules can match nothing: llama.cpp's view (an empty
	// alternative) and the true one.
	syntactic := make([]bool, n)
	nullable := make([]bool, n)
	var (
		pending []int              // references not yet known to match nothing, by alternative
		owner   []int              // the rule of each alternative
		users   = make([][]int, n) // alternatives by rule referenced
		queue   []int
	)
	for r, rule := range p.rules {
		for _, s := range alts(rule) {
			a := len(pending)
			owner = append(owner, r)
			refs, terminal := 0, false
			for _, e := range rule[s:] {
				if e.typ == gEnd || e.typ == gAlt {
					break
				}
				if e.typ == gRef {
					refs++
					users[int(e.val)] = append(users[int(e.val)], a)
				} else {
					terminal = true
				}
			}
			if terminal {
				refs = -1
			}
			pending = append(pending, refs)
			if refs == 0 {
				syntactic[r] = true
				if !nullable[r] {
					nullable[r] = true
					queue = append(queue, r)
				}
			}
		}
	}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		for _, a := range users[r] {
			if pending[a] > 0 {
				pending[a]--
				if pending[a] == 0 && !nullable[owner[a]] {
					nullable[owner[a]] = true
					queue = append(queue, owner[a])
				}
			}
		}
	}

	// The rules each rule can begin with: those referenced before its
	// first element that cannot match nothing, and that one.
	leftmost := func(r int, visit func(s int)) {
		rule := p.rules[r]
		for _, s := range alts(rule) {
			for _, e := range rule[s:] {
				if e.typ != gRef {
					break
				}
				visit(int(e.val))
				if !nullable[e.val] {
					break
				}
			}
		}
	}
	// Order them so that each comes after those it begins with, refusing
	// cycles: left recursion.
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, n)
	order := make([]int, 0, n)
	for r0 := range n {
		if color[r0] != white {
			continue
		}
		type frame struct {
			r    int
			next []int
		}
		succ := func(r int) []int {
			var s []int
			leftmost(r, func(x int) { s = append(s, x) })
			return s
		}
		stack := []frame{{r0, succ(r0)}}
		color[r0] = grey
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if len(f.next) == 0 {
				color[f.r] = black
				order = append(order, f.r)
				stack = stack[:len(stack)-1]
				continue
			}
			s := f.next[0]
			f.next = f.next[1:]
			switch color[s] {
			case grey:
				return grammarErr("rule %q is left-recursive: it can reach itself before matching anything", p.ruleName(s))
			case white:
				color[s] = grey
				stack = append(stack, frame{s, succ(s)})
			}
		}
	}

	// What advancing into each rule costs, in that order, and what
	// llama_grammar_detect_left_recursion reads, which remembers nothing
	// and so reads a rule again for each way of reaching it.
	sum := make([]advance, n)
	detect := make([]uint64, n)
	for _, r := range order {
		rule := p.rules[r]
		detect[r] = uint64(2 * len(rule))
		recurse := true
		for _, e := range rule {
			switch {
			case e.typ == gRef && recurse:
				detect[r] = satAdd(detect[r], detect[e.val])
				recurse = syntactic[e.val]
			case e.typ == gEnd || e.typ == gAlt:
				recurse = true
			default:
				recurse = false
			}
		}
		total := advance{below: -1}
		for _, s := range alts(rule) {
			a, _ := walk(rule, s, sum, nil)
			total = total.add(a)
		}
		sum[r] = total
	}
	// llama_grammar_init_impl checks each rule not yet visited.
	var work uint64
	seen := make([]bool, n)
	for r := range n {
		if seen[r] {
			continue
		}
		work = satAdd(work, detect[r])
		stack := []int{r}
		seen[r] = true
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			recurse := true
			for _, e := range p.rules[x] {
				switch {
				case e.typ == gRef && recurse:
					if !seen[e.val] {
						seen[e.val] = true
						stack = append(stack, int(e.val))
					}
					recurse = syntactic[e.val]
				case e.typ == gEnd || e.typ == gAlt:
					recurse = true
				default:
					recurse = false
				}
			}
		}
	}
	if work > maxLeftRecursionWork {
		return grammarErr("grammar is too ambiguous: llama.cpp's left recursion check would read %d elements, over %d", work, maxLeftRecursionWork)
	}

	// Every place the matcher can stand: the start of an alternative of
	// root, or what follows a terminal or a reference.
	for r, rule := range p.rules {
		for _, s := range alts(rule) {
			_, err := walk(rule, s, sum, func(a advance) error {
				switch {
				case a.calls > maxGrammarAdvance:
					return grammarErr("grammar is too ambiguous at rule %q: llama.cpp would take %d steps to advance, over %d", p.ruleName(r), a.calls, maxGrammarAdvance)
				case a.empty > 1:
					return grammarErr("grammar is ambiguous at rule %q: it can match nothing in %d ways (as in (x?)? or (x*)?), on which llama.cpp's matcher is exponential", p.ruleName(r), a.empty)
				case a.depth > maxGrammarRecursion:
					return grammarErr("grammar nests rules that can match nothing deeper than %d levels at rule %q", maxGrammarRecursion, p.ruleName(r))
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// walk goes back over the alternative of rule that starts at s, computing
// what advancing from each place costs from the costs of the rules
// referenced, and calls check, if not nil, at each place. The cost at s
// depends only on the rules referenced before the first element that
// cannot match nothing, and on that one.
func walk(rule []gelem, s int, sum []advance, check func(advance) error) (advance, error) {
	end := s
	for rule[end].typ != gEnd && rule[end].typ != gAlt {
		end++
	}
	a := atEnd
	for i := end - 1; i >= s; i-- {
		switch rule[i].typ {
		case gCharAlt, gCharRngUpper:
			continue // inside a character class
		case gRef:
			a = step(sum[rule[i].val], a)
		default:
			a = atTerminal
		}
		if check != nil {
			if err := check(a); err != nil {
				return a, err
			}
		}
	}
	return a, nil
}
