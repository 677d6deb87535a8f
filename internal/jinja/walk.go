package jinja

// names reports which of the given names the nodes reference, the way
// Jinja decides whether a macro takes varargs, kwargs or a caller; with
// macros, the bodies of the macros they define count too.
func names(body []node, macros bool, want ...string) map[string]bool {
	found := map[string]bool{}
	var visitExpr func(e expr)
	var visitNodes func(ns []node)
	visitExprs := func(es []expr) {
		for _, e := range es {
			visitExpr(e)
		}
	}
	visitKwargs := func(ks []kwarg) {
		for _, k := range ks {
			visitExpr(k.val)
		}
	}
	visitExpr = func(e expr) {
		switch e := e.(type) {
		case nil:
		case *nameExpr:
			for _, w := range want {
				if e.name == w {
					found[w] = true
				}
			}
		case *listExpr:
			visitExprs(e.items)
		case *tupleExpr:
			visitExprs(e.items)
		case *dictExpr:
			visitExprs(e.keys)
			visitExprs(e.vals)
		case *getattrExpr:
			visitExpr(e.obj)
		case *getitemExpr:
			visitExpr(e.obj)
			visitExpr(e.key)
		case *sliceExpr:
			visitExprs([]expr{e.start, e.stop, e.step})
		case *callExpr:
			visitExpr(e.fn)
			visitExprs(e.args)
			visitKwargs(e.kwargs)
			visitExprs([]expr{e.dynArgs, e.dynKwarg})
		case *filterExpr:
			if e == nil {
				return
			}
			visitExpr(e.arg)
			visitExprs(e.args)
			visitKwargs(e.kwargs)
			visitExprs([]expr{e.dynArgs, e.dynKwarg})
		case *testExpr:
			visitExpr(e.arg)
			visitExprs(e.args)
			visitKwargs(e.kwargs)
			visitExprs([]expr{e.dynArgs, e.dynKwarg})
		case *unaryExpr:
			visitExpr(e.arg)
		case *binaryExpr:
			visitExpr(e.left)
			visitExpr(e.right)
		case *compareExpr:
			visitExpr(e.first)
			visitExprs(e.rest)
		case *condExpr:
			visitExprs([]expr{e.test, e.then, e.else_})
		}
	}
	visitNodes = func(ns []node) {
		for _, n := range ns {
			switch n := n.(type) {
			case *outputNode:
				visitExpr(n.expr)
			case *ifNode:
				visitExpr(n.cond)
				visitNodes(n.body)
				visitNodes(n.else_)
			case *forNode:
				visitExpr(n.iter)
				visitExpr(n.filter)
				visitNodes(n.body)
				visitNodes(n.else_)
			case *setNode:
				visitExpr(n.value)
				if n.filter != nil {
					visitExpr(n.filter)
				}
				visitNodes(n.body)
			case *callBlockNode:
				visitExpr(n.call)
				visitExprs(n.defaults)
				visitNodes(n.body)
			case *filterBlockNode:
				visitExpr(n.filter)
				visitNodes(n.body)
			case *withNode:
				visitExprs(n.values)
				visitNodes(n.body)
			case *plainBlockNode:
				visitNodes(n.body)
			case *macroNode:
				// A nested macro's own names are its business,
				// unless macros.
				visitExprs(n.defaults)
				if macros {
					visitNodes(n.body)
				}
			}
		}
	}
	visitNodes(body)
	return found
}
