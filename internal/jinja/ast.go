package jinja

// Statement nodes. Every node records the source line it starts on.

type node interface{ nodeLine() int }

type pos struct{ line int }

func (p pos) nodeLine() int { return p.line }

type outputNode struct {
	pos
	data string // literal text, when expr is nil
	expr expr
}

type ifNode struct {
	pos
	cond  expr
	body  []node
	else_ []node // an elif is an ifNode alone in else_
}

type forNode struct {
	pos
	target    expr // nameExpr or tupleExpr of names
	iter      expr
	filter    expr // the "if" of "for x in xs if cond"; may be nil
	body      []node
	else_     []node
	recursive bool
}

type setNode struct {
	pos
	target expr // nameExpr, tupleExpr or nsRefExpr
	value  expr // nil for a block set
	body   []node
	filter *filterExpr // block set filter; its arg is replaced by the body
}

type macroNode struct {
	pos
	name     string
	params   []string
	defaults []expr // aligned to the tail of params
	body     []node
	// Whether the body uses the special names; a macro that does not
	// rejects extra arguments, as in Jinja.
	usesVarargs, usesKwargs, usesCaller bool
}

type callBlockNode struct {
	pos
	call     *callExpr
	params   []string
	defaults []expr
	body     []node
	// As for macroNode, for the caller.
	usesVarargs, usesKwargs, usesCaller bool
}

type filterBlockNode struct {
	pos
	filter *filterExpr // applied to the rendered body
	body   []node
}

type withNode struct {
	pos
	targets []expr
	values  []expr
	body    []node
}

type loopControlNode struct {
	pos
	brk bool
}

// plainBlockNode renders its body unchanged ({% generation %}).
type plainBlockNode struct {
	pos
	body []node
}

// Expression nodes.

type expr interface{ nodeLine() int }

type constExpr struct {
	pos
	val any
}

type nameExpr struct {
	pos
	name string
}

type nsRefExpr struct {
	pos
	name, attr string
}

type listExpr struct {
	pos
	items []expr
}

type tupleExpr struct {
	pos
	items []expr
}

type dictExpr struct {
	pos
	keys, vals []expr
}

type getattrExpr struct {
	pos
	obj  expr
	attr string
}

type getitemExpr struct {
	pos
	obj, key expr
}

type sliceExpr struct {
	pos
	start, stop, step expr // each may be nil
}

type kwarg struct {
	name string
	val  expr
}

type callExpr struct {
	pos
	fn       expr
	args     []expr
	kwargs   []kwarg
	dynArgs  expr
	dynKwarg expr
}

type filterExpr struct {
	pos
	arg      expr // nil inside filter blocks and block sets
	name     string
	args     []expr
	kwargs   []kwarg
	dynArgs  expr
	dynKwarg expr
}

type testExpr struct {
	pos
	arg      expr
	name     string
	args     []expr
	kwargs   []kwarg
	dynArgs  expr
	dynKwarg expr
}

type unaryExpr struct {
	pos
	op  string // "not", "-", "+"
	arg expr
}

type binaryExpr struct {
	pos
	op          string // + - * / // % ** ~ and or
	left, right expr
}

type compareExpr struct {
	pos
	first expr
	ops   []string // == != < <= > >= in notin
	rest  []expr
}

type condExpr struct {
	pos
	test, then, else_ expr // else_ may be nil
}
