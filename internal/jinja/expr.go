package jinja

import (
	"fmt"
)

// eval evaluates an expression.
func (r *renderer) eval(e expr, sc *scope) (any, error) {
	switch e := e.(type) {
	case *constExpr:
		return e.val, nil
	case *nameExpr:
		return r.lookup(e.name, sc), nil
	case *listExpr:
		out := make([]any, len(e.items))
		for i, it := range e.items {
			v, err := r.eval(it, sc)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case *tupleExpr:
		out := make(tuple, len(e.items))
		for i, it := range e.items {
			v, err := r.eval(it, sc)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case *dictExpr:
		m := NewMap()
		for i, ke := range e.keys {
			k, err := r.eval(ke, sc)
			if err != nil {
				return nil, err
			}
			if _, ok := hashOf(k); !ok {
				return nil, &Error{Message: fmt.Sprintf("unhashable type: '%s'", typeName(k))}
			}
			v, err := r.eval(e.vals[i], sc)
			if err != nil {
				return nil, err
			}
			m.set(k, v)
		}
		return m, nil
	case *getattrExpr:
		obj, err := r.eval(e.obj, sc)
		if err != nil {
			return nil, err
		}
		return getAttr(obj, e.attr)
	case *getitemExpr:
		obj, err := r.eval(e.obj, sc)
		if err != nil {
			return nil, err
		}
		if s, ok := e.key.(*sliceExpr); ok {
			return r.evalSlice(obj, s, sc)
		}
		key, err := r.eval(e.key, sc)
		if err != nil {
			return nil, err
		}
		return getItem(obj, key)
	case *sliceExpr:
		return nil, &Error{Message: "slice outside of a subscript"}
	case *callExpr:
		return r.evalCall(e, sc, nil)
	case *filterExpr:
		return r.evalFilter(e, sc, nil)
	case *testExpr:
		return r.evalTest(e, sc)
	case *unaryExpr:
		v, err := r.eval(e.arg, sc)
		if err != nil {
			return nil, err
		}
		switch e.op {
		case "not":
			return !truthy(v), nil
		case "-":
			return negate(v)
		default:
			if u, ok := v.(*undefined); ok {
				return nil, u.fail()
			}
			if !isNumber(v) {
				return nil, &Error{Message: fmt.Sprintf("bad operand type for unary +: '%s'", typeName(v))}
			}
			if b, ok := v.(bool); ok {
				n, _ := asInt(b)
				return n, nil
			}
			return v, nil
		}
	case *binaryExpr:
		left, err := r.eval(e.left, sc)
		if err != nil {
			return nil, err
		}
		switch e.op {
		case "and":
			if !truthy(left) {
				return left, nil
			}
			return r.eval(e.right, sc)
		case "or":
			if truthy(left) {
				return left, nil
			}
			return r.eval(e.right, sc)
		}
		right, err := r.eval(e.right, sc)
		if err != nil {
			return nil, err
		}
		if e.op == "~" {
			s := toStr(left) + toStr(right)
			if len(s) > maxOutputSize {
				return nil, &Error{Message: "string too large"}
			}
			return s, nil
		}
		return binop(e.op, left, right)
	case *compareExpr:
		left, err := r.eval(e.first, sc)
		if err != nil {
			return nil, err
		}
		for i, op := range e.ops {
			right, err := r.eval(e.rest[i], sc)
			if err != nil {
				return nil, err
			}
			ok, err := compareOp(op, left, right)
			if err != nil {
				return nil, err
			}
			if !ok {
				return false, nil
			}
			left = right
		}
		return true, nil
	case *condExpr:
		t, err := r.eval(e.test, sc)
		if err != nil {
			return nil, err
		}
		if truthy(t) {
			return r.eval(e.then, sc)
		}
		if e.else_ == nil {
			return &undefined{hint: fmt.Sprintf("the inline if-expression on line %d evaluated to false and no else section was defined.", e.line)}, nil
		}
		return r.eval(e.else_, sc)
	}
	return nil, fmt.Errorf("jinja: cannot evaluate %T", e)
}

// compareOp applies one comparison operator.
func compareOp(op string, a, b any) (bool, error) {
	switch op {
	case "==":
		return equal(a, b), nil
	case "!=":
		return !equal(a, b), nil
	case "in":
		return contains(b, a)
	case "notin":
		ok, err := contains(b, a)
		return !ok, err
	}
	for _, v := range []any{a, b} {
		if u, ok := v.(*undefined); ok {
			return false, u.fail()
		}
	}
	c, err := compare(a, b)
	if err != nil {
		return false, &Error{Message: fmt.Sprintf("'%s' not supported between instances of '%s' and '%s'", op, typeName(a), typeName(b))}
	}
	if c == 2 { // NaN
		return false, nil
	}
	switch op {
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	}
	return c >= 0, nil
}

// evalArgs evaluates call arguments, expanding *args and **kwargs.
func (r *renderer) evalArgs(args []expr, kwargs []kwarg, dynArgs, dynKwargs expr, sc *scope) ([]any, *Map, error) {
	out := make([]any, 0, len(args))
	for _, a := range args {
		v, err := r.eval(a, sc)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, v)
	}
	kw := NewMap()
	for _, k := range kwargs {
		v, err := r.eval(k.val, sc)
		if err != nil {
			return nil, nil, err
		}
		kw.set(k.name, v)
	}
	if dynArgs != nil {
		v, err := r.eval(dynArgs, sc)
		if err != nil {
			return nil, nil, err
		}
		items, err := iterate(v)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, items...)
	}
	if dynKwargs != nil {
		v, err := r.eval(dynKwargs, sc)
		if err != nil {
			return nil, nil, err
		}
		m, ok := v.(*Map)
		if !ok {
			if _, isU := v.(*undefined); !isU {
				return nil, nil, &Error{Message: "argument after ** must be a mapping"}
			}
		} else {
			for i, k := range m.keys {
				kw.set(k, m.vals[i])
			}
		}
	}
	return out, kw, nil
}

func (r *renderer) evalCall(e *callExpr, sc *scope, caller *macro) (any, error) {
	fn, err := r.eval(e.fn, sc)
	if err != nil {
		return nil, err
	}
	args, kw, err := r.evalArgs(e.args, e.kwargs, e.dynArgs, e.dynKwarg, sc)
	if err != nil {
		return nil, err
	}
	if err := r.step(); err != nil {
		return nil, err
	}
	if caller != nil {
		m, ok := fn.(*macro)
		if !ok {
			return nil, &Error{Message: "call blocks need a macro"}
		}
		return r.callMacro(m, args, kw, caller)
	}
	return r.callValue(fn, args, kw)
}

// callValue calls a callable value.
func (r *renderer) callValue(fn any, args []any, kw *Map) (any, error) {
	switch f := fn.(type) {
	case *callable:
		return f.fn(r, args, kw)
	case *macro:
		return r.callMacro(f, args, kw, nil)
	case *loopObj:
		return f.call(r, args)
	case Func:
		if kw.Len() > 0 {
			return nil, &Error{Message: "keyword arguments are not supported by Go functions"}
		}
		in := make([]any, len(args))
		for i, a := range args {
			in[i] = export(a)
		}
		v, err := f(in...)
		if err != nil {
			return nil, err
		}
		return normalize(v, 0)
	case *undefined:
		return nil, f.fail()
	}
	return nil, &Error{Message: fmt.Sprintf("'%s' object is not callable", typeName(fn))}
}

// export converts an engine value for a caller's Func.
func export(v any) any {
	switch x := v.(type) {
	case tuple:
		out := make([]any, len(x))
		for i, it := range x {
			out[i] = export(it)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, it := range x {
			out[i] = export(it)
		}
		return out
	case *undefined:
		return nil
	}
	return v
}

func (r *renderer) evalFilter(f *filterExpr, sc *scope, input any) (any, error) {
	var v any
	var err error
	switch a := f.arg.(type) {
	case nil:
		v = input
	case *filterExpr:
		v, err = r.evalFilter(a, sc, input)
	default:
		v, err = r.eval(a, sc)
	}
	if err != nil {
		return nil, err
	}
	fn := lookupFilter(f.name)
	if fn == nil {
		return nil, &Error{Message: fmt.Sprintf("No filter named '%s'.", f.name), Line: f.line}
	}
	args, kw, err := r.evalArgs(f.args, f.kwargs, f.dynArgs, f.dynKwarg, sc)
	if err != nil {
		return nil, err
	}
	return fn(r, v, args, kw)
}

func (r *renderer) evalTest(t *testExpr, sc *scope) (any, error) {
	v, err := r.eval(t.arg, sc)
	if err != nil {
		return nil, err
	}
	fn := lookupTest(t.name)
	if fn == nil {
		return nil, &Error{Message: fmt.Sprintf("No test named '%s'.", t.name), Line: t.line}
	}
	args, kw, err := r.evalArgs(t.args, t.kwargs, t.dynArgs, t.dynKwarg, sc)
	if err != nil {
		return nil, err
	}
	return fn(r, v, args, kw)
}

// evalSlice evaluates obj[start:stop:step].
func (r *renderer) evalSlice(obj any, s *sliceExpr, sc *scope) (any, error) {
	var bounds [3]any
	for i, e := range []expr{s.start, s.stop, s.step} {
		if e == nil {
			continue
		}
		v, err := r.eval(e, sc)
		if err != nil {
			return nil, err
		}
		bounds[i] = v
	}
	return sliceValue(obj, bounds[0], bounds[1], bounds[2])
}
