package jinja

import (
	"fmt"
	"slices"
)

// maxNesting bounds how deeply blocks and expressions may nest, so that a
// hostile template cannot exhaust the goroutine stack.
const maxNesting = 200

type parser struct {
	toks  []token
	i     int
	depth int
	soft  int // >0 while parsing an if test: unknown filters and tests fail at run time
}

func (p *parser) cur() token  { return p.toks[p.i] }
func (p *parser) peek() token { return p.toks[min(p.i+1, len(p.toks)-1)] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

func (p *parser) fail(line int, format string, args ...any) error {
	return newSyntaxError(line, format, args...)
}

func (p *parser) isOp(op string) bool {
	t := p.cur()
	return t.kind == tokOp && t.val == op
}

func (p *parser) isName(name string) bool {
	t := p.cur()
	return t.kind == tokName && t.val == name
}

func (p *parser) skipOp(op string) bool {
	if p.isOp(op) {
		p.next()
		return true
	}
	return false
}

func (p *parser) skipName(name string) bool {
	if p.isName(name) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectOp(op string) error {
	if !p.skipOp(op) {
		return p.fail(p.cur().line, "expected token '%s', got '%s'", op, p.cur())
	}
	return nil
}

func (p *parser) expectName() (string, error) {
	t := p.cur()
	if t.kind != tokName {
		return "", p.fail(t.line, "expected token 'name', got '%s'", t)
	}
	p.next()
	return t.val, nil
}

func (p *parser) expectBlockEnd() error {
	t := p.cur()
	if t.kind != tokBlockEnd {
		return p.fail(t.line, "expected token 'end of statement block', got '%s'", t)
	}
	p.next()
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxNesting {
		return p.fail(p.cur().line, "template nests too deeply")
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// parseTemplate parses the whole token stream.
func parseTemplate(toks []token) ([]node, error) {
	p := &parser{toks: toks}
	body, err := p.subparse(nil)
	if err != nil {
		return nil, err
	}
	if t := p.cur(); t.kind != tokEOF {
		return nil, p.fail(t.line, "unexpected '%s'", t)
	}
	return body, nil
}

// subparse parses nodes until a block whose first name is in ends; it
// leaves the stream at that name (after the "{%").
func (p *parser) subparse(ends []string) ([]node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	var body []node
	for {
		t := p.cur()
		switch t.kind {
		case tokEOF:
			if ends != nil {
				return nil, p.fail(t.line, "Unexpected end of template. Jinja was looking for the following tags: %s. The innermost block that needs to be closed is '%s'.", quoteList(ends), blockOf(ends))
			}
			return body, nil
		case tokData:
			p.next()
			body = append(body, &outputNode{pos: pos{t.line}, data: t.val})
		case tokVarBegin:
			p.next()
			e, err := p.parseTuple(true, false, nil)
			if err != nil {
				return nil, err
			}
			if c := p.cur(); c.kind != tokVarEnd {
				return nil, p.fail(c.line, "expected token 'end of print statement', got '%s'", c)
			}
			p.next()
			body = append(body, &outputNode{pos: pos{t.line}, expr: e})
		case tokBlockBegin:
			p.next()
			c := p.cur()
			if c.kind == tokName && slices.Contains(ends, c.val) {
				return body, nil
			}
			n, err := p.parseStatement()
			if err != nil {
				return nil, err
			}
			body = append(body, n)
		default:
			return nil, p.fail(t.line, "unexpected '%s'", t)
		}
	}
}

func quoteList(ends []string) string {
	s := ""
	for i, e := range ends {
		if i > 0 {
			s += " or "
		}
		s += "'" + e + "'"
	}
	return s
}

func blockOf(ends []string) string {
	for _, e := range ends {
		if len(e) > 3 && e[:3] == "end" {
			return e[3:]
		}
	}
	return ends[0]
}

func (p *parser) parseStatement() (node, error) {
	t := p.cur()
	if t.kind != tokName {
		return nil, p.fail(t.line, "tag name expected")
	}
	p.next()
	line := pos{t.line}
	switch t.val {
	case "if":
		return p.parseIf(line)
	case "for":
		return p.parseFor(line)
	case "set":
		return p.parseSet(line)
	case "macro":
		return p.parseMacro(line)
	case "call":
		return p.parseCallBlock(line)
	case "filter":
		return p.parseFilterBlock(line)
	case "with":
		return p.parseWith(line)
	case "generation":
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		body, err := p.subparse([]string{"endgeneration"})
		if err != nil {
			return nil, err
		}
		p.next()
		return &plainBlockNode{pos: line, body: body}, p.expectBlockEnd()
	case "break", "continue":
		return &loopControlNode{pos: line, brk: t.val == "break"}, p.expectBlockEnd()
	case "block", "extends", "include", "import", "from", "autoescape", "do", "trans":
		return nil, p.fail(t.line, "jinja: the '%s' tag is not supported", t.val)
	}
	return nil, p.fail(t.line, "Encountered unknown tag '%s'.", t.val)
}

func (p *parser) parseIf(line pos) (node, error) {
	root := &ifNode{pos: line}
	n := root
	for {
		p.soft++
		cond, err := p.parseTuple(false, false, nil)
		p.soft--
		if err != nil {
			return nil, err
		}
		n.cond = cond
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		body, err := p.subparse([]string{"elif", "else", "endif"})
		if err != nil {
			return nil, err
		}
		n.body = body
		tag := p.next()
		switch tag.val {
		case "elif":
			next := &ifNode{pos: pos{tag.line}}
			n.else_ = []node{next}
			n = next
			continue
		case "else":
			if err := p.expectBlockEnd(); err != nil {
				return nil, err
			}
			els, err := p.subparse([]string{"endif"})
			if err != nil {
				return nil, err
			}
			n.else_ = els
			p.next()
		}
		return root, p.expectBlockEnd()
	}
}

func (p *parser) parseFor(line pos) (node, error) {
	target, err := p.parseAssignTarget(true, false, []string{"in"})
	if err != nil {
		return nil, err
	}
	if !p.skipName("in") {
		return nil, p.fail(p.cur().line, "expected token 'in', got '%s'", p.cur())
	}
	iter, err := p.parseTuple(false, false, []string{"recursive"})
	if err != nil {
		return nil, err
	}
	n := &forNode{pos: line, target: target, iter: iter}
	if p.skipName("if") {
		if n.filter, err = p.parseExpression(true); err != nil {
			return nil, err
		}
	}
	n.recursive = p.skipName("recursive")
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if n.body, err = p.subparse([]string{"endfor", "else"}); err != nil {
		return nil, err
	}
	if p.next().val == "else" {
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		if n.else_, err = p.subparse([]string{"endfor"}); err != nil {
			return nil, err
		}
		p.next()
	}
	return n, p.expectBlockEnd()
}

func (p *parser) parseSet(line pos) (node, error) {
	target, err := p.parseAssignTarget(true, true, nil)
	if err != nil {
		return nil, err
	}
	n := &setNode{pos: line, target: target}
	if p.skipOp("=") {
		if n.value, err = p.parseTuple(true, false, nil); err != nil {
			return nil, err
		}
		return n, p.expectBlockEnd()
	}
	if p.isOp("|") {
		f, err := p.parseFilter(nil, false)
		if err != nil {
			return nil, err
		}
		n.filter = f
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if n.body, err = p.subparse([]string{"endset"}); err != nil {
		return nil, err
	}
	p.next()
	return n, p.expectBlockEnd()
}

func (p *parser) parseMacro(line pos) (node, error) {
	name, err := p.expectName()
	if err != nil {
		return nil, err
	}
	n := &macroNode{pos: line, name: name}
	if n.params, n.defaults, err = p.parseSignature(); err != nil {
		return nil, err
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if n.body, err = p.subparse([]string{"endmacro"}); err != nil {
		return nil, err
	}
	used := names(n.body, false, "varargs", "kwargs", "caller")
	n.usesVarargs, n.usesKwargs, n.usesCaller = used["varargs"], used["kwargs"], used["caller"]
	p.next()
	return n, p.expectBlockEnd()
}

// parseSignature parses "(a, b=default, ...)".
func (p *parser) parseSignature() ([]string, []expr, error) {
	var params []string
	var defaults []expr
	if err := p.expectOp("("); err != nil {
		return nil, nil, err
	}
	for !p.isOp(")") {
		if len(params) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, nil, err
			}
			if p.isOp(")") {
				break
			}
		}
		name, err := p.expectName()
		if err != nil {
			return nil, nil, err
		}
		params = append(params, name)
		if p.skipOp("=") {
			d, err := p.parseExpression(true)
			if err != nil {
				return nil, nil, err
			}
			defaults = append(defaults, d)
		} else if len(defaults) > 0 {
			return nil, nil, p.fail(p.cur().line, "non-default argument follows default argument")
		}
	}
	p.next()
	return params, defaults, nil
}

func (p *parser) parseCallBlock(line pos) (node, error) {
	n := &callBlockNode{pos: line}
	var err error
	if p.isOp("(") {
		if n.params, n.defaults, err = p.parseSignature(); err != nil {
			return nil, err
		}
	}
	e, err := p.parseExpression(true)
	if err != nil {
		return nil, err
	}
	call, ok := e.(*callExpr)
	if !ok {
		return nil, p.fail(line.line, "expected call")
	}
	n.call = call
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if n.body, err = p.subparse([]string{"endcall"}); err != nil {
		return nil, err
	}
	used := names(n.body, false, "varargs", "kwargs", "caller")
	n.usesVarargs, n.usesKwargs, n.usesCaller = used["varargs"], used["kwargs"], used["caller"]
	p.next()
	return n, p.expectBlockEnd()
}

func (p *parser) parseFilterBlock(line pos) (node, error) {
	f, err := p.parseFilter(nil, true)
	if err != nil {
		return nil, err
	}
	n := &filterBlockNode{pos: line, filter: f}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if n.body, err = p.subparse([]string{"endfilter"}); err != nil {
		return nil, err
	}
	p.next()
	return n, p.expectBlockEnd()
}

func (p *parser) parseWith(line pos) (node, error) {
	n := &withNode{pos: line}
	for p.cur().kind != tokBlockEnd {
		if len(n.targets) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		target, err := p.parseAssignTarget(false, false, nil)
		if err != nil {
			return nil, err
		}
		if err := p.expectOp("="); err != nil {
			return nil, err
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		n.targets = append(n.targets, target)
		n.values = append(n.values, v)
	}
	p.next()
	var err error
	if n.body, err = p.subparse([]string{"endwith"}); err != nil {
		return nil, err
	}
	p.next()
	return n, p.expectBlockEnd()
}

// parseAssignTarget parses a name, a namespace reference (ns.attr) or a
// tuple of names.
func (p *parser) parseAssignTarget(withTuple, withNamespace bool, extraEnd []string) (expr, error) {
	t := p.cur()
	if withNamespace && t.kind == tokName && p.peek().kind == tokOp && p.peek().val == "." {
		p.next()
		p.next()
		attr, err := p.expectName()
		if err != nil {
			return nil, err
		}
		return &nsRefExpr{pos: pos{t.line}, name: t.val, attr: attr}, nil
	}
	var target expr
	var err error
	if withTuple {
		target, err = p.parseTupleOf(p.parsePrimary, false, extraEnd)
	} else {
		var name string
		name, err = p.expectName()
		target = &nameExpr{pos: pos{t.line}, name: name}
	}
	if err != nil {
		return nil, err
	}
	if !assignable(target) {
		return nil, p.fail(t.line, "can't assign to '%s'", describeExpr(target))
	}
	return target, nil
}

func assignable(e expr) bool {
	switch e := e.(type) {
	case *nameExpr:
		switch e.name {
		case "true", "false", "none", "True", "False", "None":
			return false
		}
		return true
	case *tupleExpr:
		for _, it := range e.items {
			if !assignable(it) {
				return false
			}
		}
		return true
	}
	return false
}

func describeExpr(e expr) string {
	switch e.(type) {
	case *constExpr:
		return "const"
	case *tupleExpr:
		return "tuple"
	case *listExpr:
		return "list"
	case *dictExpr:
		return "dict"
	}
	return fmt.Sprintf("%T", e)
}

// parseTuple parses an expression or a comma separated tuple of them.
func (p *parser) parseTuple(withCond, explicitParens bool, extraEnd []string) (expr, error) {
	return p.parseTupleOf(func() (expr, error) { return p.parseExpression(withCond) }, explicitParens, extraEnd)
}

func (p *parser) parseTupleOf(parse func() (expr, error), explicitParens bool, extraEnd []string) (expr, error) {
	line := p.cur().line
	var items []expr
	isTuple := false
	for {
		if len(items) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		if p.isTupleEnd(extraEnd) {
			break
		}
		e, err := parse()
		if err != nil {
			return nil, err
		}
		items = append(items, e)
		if p.isOp(",") {
			isTuple = true
		} else {
			break
		}
	}
	if !isTuple {
		if len(items) > 0 {
			return items[0], nil
		}
		if !explicitParens {
			return nil, p.fail(p.cur().line, "Expected an expression, got '%s'", p.cur())
		}
	}
	return &tupleExpr{pos: pos{line}, items: items}, nil
}

func (p *parser) isTupleEnd(extraEnd []string) bool {
	t := p.cur()
	switch {
	case t.kind == tokVarEnd || t.kind == tokBlockEnd || t.kind == tokEOF:
		return true
	case t.kind == tokOp && t.val == ")":
		return true
	case t.kind == tokName && slices.Contains(extraEnd, t.val):
		return true
	}
	return false
}

func (p *parser) parseExpression(withCond bool) (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if withCond {
		return p.parseCondExpr()
	}
	return p.parseOr()
}

func (p *parser) parseCondExpr() (expr, error) {
	line := p.cur().line
	e, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	for p.skipName("if") {
		p.soft++
		test, err := p.parseOr()
		p.soft--
		if err != nil {
			return nil, err
		}
		c := &condExpr{pos: pos{line}, test: test, then: e}
		if p.skipName("else") {
			if c.else_, err = p.parseCondExpr(); err != nil {
				return nil, err
			}
		}
		e = c
	}
	return e, nil
}

func (p *parser) parseOr() (expr, error) { return p.parseKeyword("or", p.parseAnd) }

func (p *parser) parseAnd() (expr, error) { return p.parseKeyword("and", p.parseNot) }

// parseKeyword parses next (op next)* for the keyword operators "or" and
// "and", left-associative.
func (p *parser) parseKeyword(op string, next func() (expr, error)) (expr, error) {
	line := p.cur().line
	left, err := next()
	if err != nil {
		return nil, err
	}
	for p.skipName(op) {
		right, err := next()
		if err != nil {
			return nil, err
		}
		left = &binaryExpr{pos: pos{line}, op: op, left: left, right: right}
	}
	return left, nil
}

func (p *parser) parseNot() (expr, error) {
	if p.isName("not") {
		line := p.next().line
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		arg, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return &unaryExpr{pos: pos{line}, op: "not", arg: arg}, nil
	}
	return p.parseCompare()
}

func (p *parser) parseCompare() (expr, error) {
	line := p.cur().line
	first, err := p.parseMath1()
	if err != nil {
		return nil, err
	}
	var ops []string
	var rest []expr
	for {
		t := p.cur()
		var op string
		switch {
		case t.kind == tokOp && (t.val == "==" || t.val == "!=" || t.val == "<" || t.val == "<=" || t.val == ">" || t.val == ">="):
			op = t.val
			p.next()
		case p.isName("in"):
			op = "in"
			p.next()
		case p.isName("not") && p.peek().kind == tokName && p.peek().val == "in":
			op = "notin"
			p.next()
			p.next()
		}
		if op == "" {
			break
		}
		r, err := p.parseMath1()
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		rest = append(rest, r)
	}
	if len(ops) == 0 {
		return first, nil
	}
	return &compareExpr{pos: pos{line}, first: first, ops: ops, rest: rest}, nil
}

func (p *parser) parseBinary(ops []string, next func() (expr, error)) (expr, error) {
	line := p.cur().line
	left, err := next()
	if err != nil {
		return nil, err
	}
	for {
		t := p.cur()
		if t.kind != tokOp || !slices.Contains(ops, t.val) {
			return left, nil
		}
		p.next()
		right, err := next()
		if err != nil {
			return nil, err
		}
		left = &binaryExpr{pos: pos{line}, op: t.val, left: left, right: right}
	}
}

func (p *parser) parseMath1() (expr, error) {
	return p.parseBinary([]string{"+", "-"}, p.parseConcat)
}

func (p *parser) parseConcat() (expr, error) {
	return p.parseBinary([]string{"~"}, p.parseMath2)
}

func (p *parser) parseMath2() (expr, error) {
	return p.parseBinary([]string{"*", "/", "//", "%"}, p.parsePow)
}

func (p *parser) parsePow() (expr, error) {
	return p.parseBinary([]string{"**"}, func() (expr, error) { return p.parseUnary(true) })
}

func (p *parser) parseUnary(withFilter bool) (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	t := p.cur()
	var e expr
	var err error
	if t.kind == tokOp && (t.val == "-" || t.val == "+") {
		p.next()
		arg, err := p.parseUnary(false)
		if err != nil {
			return nil, err
		}
		e = &unaryExpr{pos: pos{t.line}, op: t.val, arg: arg}
	} else if e, err = p.parsePrimary(); err != nil {
		return nil, err
	}
	if e, err = p.parsePostfix(e); err != nil {
		return nil, err
	}
	if withFilter {
		return p.parseFilterExpr(e)
	}
	return e, nil
}

func (p *parser) parsePrimary() (expr, error) {
	t := p.cur()
	line := pos{t.line}
	switch t.kind {
	case tokName:
		p.next()
		switch t.val {
		case "true", "True":
			return &constExpr{pos: line, val: true}, nil
		case "false", "False":
			return &constExpr{pos: line, val: false}, nil
		case "none", "None":
			return &constExpr{pos: line, val: nil}, nil
		}
		return &nameExpr{pos: line, name: t.val}, nil
	case tokString:
		s := p.next().val
		for p.cur().kind == tokString {
			s += p.next().val
		}
		return &constExpr{pos: line, val: s}, nil
	case tokInt:
		p.next()
		return &constExpr{pos: line, val: t.num}, nil
	case tokFloat:
		p.next()
		return &constExpr{pos: line, val: t.fnum}, nil
	case tokOp:
		switch t.val {
		case "(":
			p.next()
			e, err := p.parseTuple(true, true, nil)
			if err != nil {
				return nil, err
			}
			return e, p.expectOp(")")
		case "[":
			return p.parseList()
		case "{":
			return p.parseDict()
		}
	}
	return nil, p.fail(t.line, "unexpected '%s'", t)
}

func (p *parser) parseList() (expr, error) {
	line := pos{p.next().line}
	l := &listExpr{pos: line}
	for !p.isOp("]") {
		if len(l.items) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.isOp("]") {
				break
			}
		}
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		l.items = append(l.items, e)
	}
	p.next()
	return l, nil
}

func (p *parser) parseDict() (expr, error) {
	line := pos{p.next().line}
	d := &dictExpr{pos: line}
	for !p.isOp("}") {
		if len(d.keys) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.isOp("}") {
				break
			}
		}
		k, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(":"); err != nil {
			return nil, err
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		d.keys = append(d.keys, k)
		d.vals = append(d.vals, v)
	}
	p.next()
	return d, nil
}

func (p *parser) parsePostfix(e expr) (expr, error) {
	for {
		var err error
		switch {
		case p.isOp(".") || p.isOp("["):
			e, err = p.parseSubscript(e)
		case p.isOp("("):
			e, err = p.parseCall(e)
		default:
			return e, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) parseFilterExpr(e expr) (expr, error) {
	for {
		var err error
		switch {
		case p.isOp("|"):
			e, err = p.parseFilter(e, false)
		case p.isName("is"):
			e, err = p.parseTest(e)
		case p.isOp("("):
			e, err = p.parseCall(e)
		default:
			return e, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) parseSubscript(e expr) (expr, error) {
	t := p.next()
	line := pos{t.line}
	if t.val == "." {
		a := p.next()
		switch a.kind {
		case tokName:
			return &getattrExpr{pos: line, obj: e, attr: a.val}, nil
		case tokInt:
			return &getitemExpr{pos: line, obj: e, key: &constExpr{pos: line, val: a.num}}, nil
		}
		return nil, p.fail(a.line, "expected name or number")
	}
	var args []expr
	for !p.isOp("]") {
		if len(args) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		a, err := p.parseSubscribed()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	p.next()
	if len(args) == 0 {
		return nil, p.fail(t.line, "expected an expression")
	}
	if len(args) == 1 {
		return &getitemExpr{pos: line, obj: e, key: args[0]}, nil
	}
	return &getitemExpr{pos: line, obj: e, key: &tupleExpr{pos: line, items: args}}, nil
}

func (p *parser) parseSubscribed() (expr, error) {
	line := pos{p.cur().line}
	s := &sliceExpr{pos: line}
	if !p.skipOp(":") {
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		if !p.skipOp(":") {
			return e, nil
		}
		s.start = e
	}
	var err error
	if !p.isOp(":") && !p.isOp("]") && !p.isOp(",") {
		if s.stop, err = p.parseExpression(true); err != nil {
			return nil, err
		}
	}
	if p.skipOp(":") && !p.isOp("]") && !p.isOp(",") {
		if s.step, err = p.parseExpression(true); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// parseCallArgs parses "(args, name=value, *dyn, **dynkw)".
func (p *parser) parseCallArgs() (args []expr, kwargs []kwarg, dynArgs, dynKwargs expr, err error) {
	open := p.next()
	invalid := func() error {
		return p.fail(open.line, "invalid syntax for function call expression")
	}
	for !p.isOp(")") {
		if len(args)+len(kwargs) > 0 || dynArgs != nil || dynKwargs != nil {
			if err = p.expectOp(","); err != nil {
				return
			}
			if p.isOp(")") {
				break
			}
		}
		switch {
		case p.isOp("*"):
			if dynArgs != nil || dynKwargs != nil {
				err = invalid()
				return
			}
			p.next()
			if dynArgs, err = p.parseExpression(true); err != nil {
				return
			}
		case p.isOp("**"):
			if dynKwargs != nil {
				err = invalid()
				return
			}
			p.next()
			if dynKwargs, err = p.parseExpression(true); err != nil {
				return
			}
		case p.cur().kind == tokName && p.peek().kind == tokOp && p.peek().val == "=":
			if dynKwargs != nil {
				err = invalid()
				return
			}
			name := p.next().val
			p.next()
			var v expr
			if v, err = p.parseExpression(true); err != nil {
				return
			}
			kwargs = append(kwargs, kwarg{name: name, val: v})
		default:
			if dynArgs != nil || dynKwargs != nil || len(kwargs) > 0 {
				err = invalid()
				return
			}
			var v expr
			if v, err = p.parseExpression(true); err != nil {
				return
			}
			args = append(args, v)
		}
	}
	if p.cur().kind == tokEOF || !p.isOp(")") {
		err = p.fail(p.cur().line, "expected token ')', got '%s'", p.cur())
		return
	}
	p.next()
	return
}

func (p *parser) parseCall(fn expr) (expr, error) {
	line := pos{p.cur().line}
	args, kwargs, da, dk, err := p.parseCallArgs()
	if err != nil {
		return nil, err
	}
	return &callExpr{pos: line, fn: fn, args: args, kwargs: kwargs, dynArgs: da, dynKwarg: dk}, nil
}

// parseFilter parses one or more "|name(args)"; with startInline the
// first name has no leading pipe (filter blocks).
func (p *parser) parseFilter(e expr, startInline bool) (*filterExpr, error) {
	var f *filterExpr
	for p.isOp("|") || startInline {
		if !startInline {
			p.next()
		}
		startInline = false
		t := p.cur()
		name, err := p.expectName()
		if err != nil {
			return nil, err
		}
		for p.skipOp(".") {
			n, err := p.expectName()
			if err != nil {
				return nil, err
			}
			name += "." + n
		}
		if p.soft == 0 && lookupFilter(name) == nil {
			return nil, p.fail(t.line, "No filter named '%s'.", name)
		}
		f = &filterExpr{pos: pos{t.line}, arg: e, name: name}
		if p.isOp("(") {
			if f.args, f.kwargs, f.dynArgs, f.dynKwarg, err = p.parseCallArgs(); err != nil {
				return nil, err
			}
		}
		e = f
	}
	return f, nil
}

func (p *parser) parseTest(e expr) (expr, error) {
	t := p.next()
	negated := p.skipName("not")
	name, err := p.expectName()
	if err != nil {
		return nil, err
	}
	for p.skipOp(".") {
		n, err := p.expectName()
		if err != nil {
			return nil, err
		}
		name += "." + n
	}
	if p.soft == 0 && lookupTest(name) == nil {
		return nil, p.fail(t.line, "No test named '%s'.", name)
	}
	te := &testExpr{pos: pos{t.line}, arg: e, name: name}
	c := p.cur()
	switch {
	case p.isOp("("):
		if te.args, te.kwargs, te.dynArgs, te.dynKwarg, err = p.parseCallArgs(); err != nil {
			return nil, err
		}
	case (c.kind == tokName || c.kind == tokString || c.kind == tokInt || c.kind == tokFloat ||
		(c.kind == tokOp && (c.val == "[" || c.val == "{"))) &&
		!(c.kind == tokName && (c.val == "else" || c.val == "or" || c.val == "and")):
		if c.kind == tokName && c.val == "is" {
			return nil, p.fail(c.line, "You cannot chain multiple tests with is")
		}
		a, err := p.parsePrimary()
		if err != nil {
			return nil, err
		}
		if a, err = p.parsePostfix(a); err != nil {
			return nil, err
		}
		te.args = []expr{a}
	}
	if negated {
		return &unaryExpr{pos: pos{t.line}, op: "not", arg: te}, nil
	}
	return te, nil
}
