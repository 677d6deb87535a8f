package jinja

import (
	"errors"
	"fmt"
	"strings"
)

// Limits that keep a runaway template from hanging or exhausting memory.
const (
	maxSteps      = 2_000_000 // statements, loop iterations and calls per Render
	maxCallDepth  = 200       // nested macro calls
	maxOutputSize = 64 << 20  // bytes of output, and of any one string value
)

type ctrl int

const (
	ctrlNone ctrl = iota
	ctrlBreak
	ctrlContinue
)

// scope holds the variables of one template, macro or loop-iteration frame.
type scope struct {
	vars   map[string]any
	parent *scope
}

func newScope(parent *scope) *scope { return &scope{vars: map[string]any{}, parent: parent} }

// renderer is the state of one Render call.
type renderer struct {
	out     *strings.Builder
	globals map[string]any
	steps   int
	depth   int
}

func (r *renderer) step() error {
	r.steps++
	if r.steps > maxSteps {
		return &Error{Message: "template exceeded its step budget (runaway loop?)"}
	}
	if r.out.Len() > maxOutputSize {
		return &Error{Message: "template output exceeds the size limit"}
	}
	return nil
}

func (r *renderer) lookup(name string, sc *scope) any {
	for s := sc; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v
		}
	}
	if v, ok := r.globals[name]; ok {
		return v
	}
	if v := builtinGlobal(name); v != nil {
		return v
	}
	return &undefined{name: name}
}

// withLine attaches a line number to an error that has none yet.
func withLine(err error, line int) error {
	var e *Error
	if errors.As(err, &e) && e.Line == 0 {
		e.Line = line
	}
	return err
}

func (r *renderer) execBody(body []node, sc *scope) (ctrl, error) {
	for _, n := range body {
		c, err := r.exec(n, sc)
		if err != nil {
			return ctrlNone, withLine(err, n.nodeLine())
		}
		if c != ctrlNone {
			return c, nil
		}
	}
	return ctrlNone, nil
}

// capture renders body into a string.
func (r *renderer) capture(body []node, sc *scope) (string, error) {
	saved := r.out
	var b strings.Builder
	r.out = &b
	_, err := r.execBody(body, sc)
	r.out = saved
	return b.String(), err
}

func (r *renderer) exec(n node, sc *scope) (ctrl, error) {
	if err := r.step(); err != nil {
		return ctrlNone, err
	}
	switch n := n.(type) {
	case *outputNode:
		if n.expr == nil {
			r.out.WriteString(n.data)
			return ctrlNone, nil
		}
		v, err := r.eval(n.expr, sc)
		if err != nil {
			return ctrlNone, err
		}
		r.out.WriteString(toStr(v))
	case *ifNode:
		v, err := r.eval(n.cond, sc)
		if err != nil {
			return ctrlNone, err
		}
		if truthy(v) {
			return r.execBody(n.body, sc)
		}
		return r.execBody(n.else_, sc)
	case *forNode:
		return ctrlNone, r.execFor(n, sc, nil, 0)
	case *setNode:
		return ctrlNone, r.execSet(n, sc)
	case *macroNode:
		sc.vars[n.name] = &macro{name: n.name, params: n.params, defaults: n.defaults, body: n.body, scope: sc,
			usesVarargs: n.usesVarargs, usesKwargs: n.usesKwargs, usesCaller: n.usesCaller}
	case *callBlockNode:
		caller := &macro{name: "caller", params: n.params, defaults: n.defaults, body: n.body, scope: sc,
			usesVarargs: n.usesVarargs, usesKwargs: n.usesKwargs, usesCaller: n.usesCaller}
		v, err := r.evalCall(n.call, sc, caller)
		if err != nil {
			return ctrlNone, err
		}
		r.out.WriteString(toStr(v))
	case *filterBlockNode:
		s, err := r.capture(n.body, newScope(sc))
		if err != nil {
			return ctrlNone, err
		}
		v, err := r.evalFilter(n.filter, sc, s)
		if err != nil {
			return ctrlNone, err
		}
		r.out.WriteString(toStr(v))
	case *withNode:
		inner := newScope(sc)
		for i, t := range n.targets {
			v, err := r.eval(n.values[i], sc)
			if err != nil {
				return ctrlNone, err
			}
			if err := r.assign(t, v, inner); err != nil {
				return ctrlNone, err
			}
		}
		return r.execBody(n.body, inner)
	case *plainBlockNode:
		s, err := r.capture(n.body, newScope(sc))
		if err != nil {
			return ctrlNone, err
		}
		r.out.WriteString(s)
	case *loopControlNode:
		if n.brk {
			return ctrlBreak, nil
		}
		return ctrlContinue, nil
	default:
		return ctrlNone, fmt.Errorf("jinja: unknown node %T", n)
	}
	return ctrlNone, nil
}

func (r *renderer) execSet(n *setNode, sc *scope) error {
	var v any
	if n.value != nil {
		var err error
		if v, err = r.eval(n.value, sc); err != nil {
			return err
		}
	} else {
		s, err := r.capture(n.body, newScope(sc))
		if err != nil {
			return err
		}
		v = s
		if n.filter != nil {
			if v, err = r.evalFilter(n.filter, sc, s); err != nil {
				return err
			}
		}
	}
	return r.assign(n.target, v, sc)
}

// assign binds v to a name, a tuple of names or a namespace attribute.
func (r *renderer) assign(target expr, v any, sc *scope) error {
	switch t := target.(type) {
	case *nameExpr:
		sc.vars[t.name] = v
		return nil
	case *nsRefExpr:
		ns, ok := r.lookup(t.name, sc).(*namespace)
		if !ok {
			return &Error{Message: "cannot assign attribute on non-namespace object"}
		}
		ns.attrs.set(t.attr, v)
		return nil
	case *tupleExpr:
		items, err := iterate(v)
		if err != nil {
			return &Error{Message: fmt.Sprintf("cannot unpack non-iterable %s object", typeName(v))}
		}
		if len(items) != len(t.items) {
			if len(items) < len(t.items) {
				return &Error{Message: fmt.Sprintf("not enough values to unpack (expected %d, got %d)", len(t.items), len(items))}
			}
			return &Error{Message: fmt.Sprintf("too many values to unpack (expected %d)", len(t.items))}
		}
		for i, it := range t.items {
			if err := r.assign(it, items[i], sc); err != nil {
				return err
			}
		}
		return nil
	}
	return &Error{Message: "cannot assign to this target"}
}

// loopObj is the "loop" variable of a for loop.
type loopObj struct {
	items   []any
	index   int
	depth   int
	node    *forNode
	scope   *scope
	changed []any
	hasLast bool
}

func (r *renderer) execFor(n *forNode, sc *scope, override []any, depth int) error {
	var items []any
	if override != nil {
		items = override
	} else {
		v, err := r.eval(n.iter, sc)
		if err != nil {
			return err
		}
		if items, err = iterate(v); err != nil {
			return err
		}
	}
	if n.filter != nil {
		var kept []any
		for _, it := range items {
			fs := newScope(sc)
			if err := r.assign(n.target, it, fs); err != nil {
				return err
			}
			ok, err := r.eval(n.filter, fs)
			if err != nil {
				return err
			}
			if truthy(ok) {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	loop := &loopObj{items: items, depth: depth, node: n, scope: sc}
	// As in Jinja's generated code, the else block runs unless some
	// iteration reached the end of the body (a break or continue skips it).
	completed := false
	for i, it := range items {
		if err := r.step(); err != nil {
			return err
		}
		loop.index = i
		is := newScope(sc)
		if err := r.assign(n.target, it, is); err != nil {
			return err
		}
		is.vars["loop"] = loop
		c, err := r.execBody(n.body, is)
		if err != nil {
			return err
		}
		if c == ctrlBreak {
			break
		}
		completed = completed || c == ctrlNone
	}
	if !completed && n.else_ != nil {
		_, err := r.execBody(n.else_, sc)
		return err
	}
	return nil
}

// loopAttr returns an attribute of the loop variable.
func (l *loopObj) attr(name string) any {
	n := int64(len(l.items))
	i := int64(l.index)
	switch name {
	case "index":
		return i + 1
	case "index0":
		return i
	case "revindex":
		return n - i
	case "revindex0":
		return n - i - 1
	case "first":
		return i == 0
	case "last":
		return i == n-1
	case "length":
		return n
	case "depth":
		return int64(l.depth + 1)
	case "depth0":
		return int64(l.depth)
	case "previtem":
		if i == 0 {
			return &undefined{hint: "there is no previous item", name: "previtem"}
		}
		return l.items[i-1]
	case "nextitem":
		if i == n-1 {
			return &undefined{hint: "there is no next item", name: "nextitem"}
		}
		return l.items[i+1]
	case "cycle":
		return &callable{name: "cycle", fn: func(r *renderer, args []any, kw *Map) (any, error) {
			if len(args) == 0 {
				return nil, &Error{Message: "no items for cycling given"}
			}
			return args[l.index%len(args)], nil
		}}
	case "changed":
		return &callable{name: "changed", fn: func(r *renderer, args []any, kw *Map) (any, error) {
			if l.hasLast && equal(tuple(args), tuple(l.changed)) {
				return false, nil
			}
			l.changed, l.hasLast = args, true
			return true, nil
		}}
	}
	return undefinedAttr(l, name)
}

// call runs a recursive loop's body over new items ("loop(children)").
func (l *loopObj) call(r *renderer, args []any) (any, error) {
	if !l.node.recursive {
		return nil, &Error{Message: "Tried to call non recursive loop.  Maybe you forgot the 'recursive' modifier."}
	}
	if len(args) != 1 {
		return nil, &Error{Message: "loop() takes exactly one argument"}
	}
	items, err := iterate(args[0])
	if err != nil {
		return nil, err
	}
	if err := r.enterCall(); err != nil {
		return nil, err
	}
	defer r.leaveCall()
	saved := r.out
	var b strings.Builder
	r.out = &b
	err = r.execFor(l.node, l.scope, append([]any{}, items...), l.depth+1)
	r.out = saved
	if len(items) == 0 {
		return "", err
	}
	return b.String(), err
}

// macro is a template macro or the caller of a call block.
type macro struct {
	name     string
	params   []string
	defaults []expr
	body     []node
	scope    *scope

	usesVarargs, usesKwargs, usesCaller bool
}

func (r *renderer) enterCall() error {
	r.depth++
	if r.depth > maxCallDepth {
		return &Error{Message: "maximum recursion depth exceeded"}
	}
	return nil
}

func (r *renderer) leaveCall() { r.depth-- }

func (r *renderer) callMacro(m *macro, args []any, kwargs *Map, caller *macro) (any, error) {
	if err := r.enterCall(); err != nil {
		return nil, err
	}
	defer r.leaveCall()
	sc := newScope(m.scope)
	firstDefault := len(m.params) - len(m.defaults)
	for i, p := range m.params {
		switch {
		case i < len(args):
			sc.vars[p] = args[i]
			if _, dup := kwargs.get(p); dup {
				return nil, &Error{Message: fmt.Sprintf("macro '%s' got multiple values for argument '%s'", m.name, p)}
			}
		default:
			if v, ok := kwargs.get(p); ok {
				sc.vars[p] = v
			} else if i >= firstDefault {
				v, err := r.eval(m.defaults[i-firstDefault], sc)
				if err != nil {
					return nil, err
				}
				sc.vars[p] = v
			} else {
				sc.vars[p] = &undefined{name: p, hint: fmt.Sprintf("parameter '%s' was not provided", p)}
			}
		}
	}
	var varargs []any
	if len(args) > len(m.params) {
		if !m.usesVarargs {
			return nil, &Error{Message: fmt.Sprintf("macro '%s' takes not more than %d argument(s)", m.name, len(m.params))}
		}
		varargs = args[len(m.params):]
	}
	sc.vars["varargs"] = tuple(varargs)
	extra := NewMap()
	for i, k := range kwargs.keys {
		ks, _ := k.(string)
		switch {
		case containsString(m.params, ks):
		case ks == "caller" && m.usesCaller:
			if caller != nil {
				return nil, &Error{Message: fmt.Sprintf("macro '%s' was invoked with two values for the special caller argument", m.name)}
			}
			sc.vars["caller"] = kwargs.vals[i]
		case m.usesKwargs:
			extra.set(k, kwargs.vals[i])
		default:
			return nil, &Error{Message: fmt.Sprintf("macro '%s' takes no keyword argument '%s'", m.name, ks)}
		}
	}
	sc.vars["kwargs"] = extra
	if caller != nil {
		if !m.usesCaller {
			return nil, &Error{Message: fmt.Sprintf("macro '%s' was invoked with two values for the special caller argument. This is most likely a bug.", m.name)}
		}
		sc.vars["caller"] = caller
	} else if _, ok := sc.vars["caller"]; !ok && m.usesCaller {
		sc.vars["caller"] = &undefined{name: "caller", hint: "No caller defined"}
	}
	s, err := r.capture(m.body, sc)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
