package jinja

import (
	"fmt"
)

// testFn is a Jinja test ("x is name(args)").
type testFn func(r *renderer, v any, args []any, kw *Map) (any, error)

// lookupTest returns the test with the given name, or nil.
func lookupTest(name string) testFn {
	switch name {
	case "defined":
		return pred(func(v any) bool { _, u := v.(*undefined); return !u })
	case "undefined":
		return pred(func(v any) bool { _, u := v.(*undefined); return u })
	case "none":
		return pred(func(v any) bool { return v == nil })
	case "boolean":
		return pred(func(v any) bool { _, ok := v.(bool); return ok })
	case "true":
		return pred(func(v any) bool { b, ok := v.(bool); return ok && b })
	case "false":
		return pred(func(v any) bool { b, ok := v.(bool); return ok && !b })
	case "integer":
		return pred(func(v any) bool { _, ok := v.(int64); return ok })
	case "float":
		return pred(func(v any) bool { _, ok := v.(float64); return ok })
	case "number":
		return pred(isNumber)
	case "string":
		return pred(func(v any) bool { _, ok := v.(string); return ok })
	case "mapping":
		return pred(func(v any) bool { _, ok := v.(*Map); return ok })
	case "iterable":
		return pred(func(v any) bool {
			switch v.(type) {
			case string, []any, tuple, *Map, *undefined, *generator, *dictView:
				return true
			}
			return false
		})
	case "sequence":
		return pred(func(v any) bool {
			switch v.(type) {
			case string, []any, tuple, *Map, *undefined:
				return true
			}
			return false
		})
	case "callable":
		return pred(func(v any) bool {
			switch v.(type) {
			case *callable, *macro, Func, *undefined:
				return true
			}
			return false
		})
	case "escaped":
		return pred(func(v any) bool { return false })
	case "lower":
		return pred(func(v any) bool { return stringPredicate("islower", toStr(v)) })
	case "upper":
		return pred(func(v any) bool { return stringPredicate("isupper", toStr(v)) })
	case "odd", "even":
		return func(r *renderer, v any, args []any, kw *Map) (any, error) {
			m, err := binop("%", v, int64(2))
			if err != nil {
				return nil, err
			}
			if name == "odd" {
				return equal(m, int64(1)), nil
			}
			return equal(m, int64(0)), nil
		}
	case "divisibleby":
		return func(r *renderer, v any, args []any, kw *Map) (any, error) {
			p, err := bindArgs("divisibleby", []string{"num"}, 1, args, kw)
			if err != nil {
				return nil, err
			}
			m, err := binop("%", v, p.get(0, nil))
			if err != nil {
				return nil, err
			}
			return equal(m, int64(0)), nil
		}
	case "eq", "equalto", "==", "ne", "!=", "lt", "lessthan", "<", "le", "<=", "gt", "greaterthan", ">", "ge", ">=":
		op := map[string]string{"eq": "==", "equalto": "==", "ne": "!=", "lt": "<", "lessthan": "<",
			"le": "<=", "gt": ">", "greaterthan": ">", "ge": ">="}[name]
		if op == "" {
			op = name
		}
		return func(r *renderer, v any, args []any, kw *Map) (any, error) {
			p, err := bindArgs(name, []string{"other"}, 1, args, kw)
			if err != nil {
				return nil, err
			}
			return compareOp(op, v, p.get(0, nil))
		}
	case "in":
		return func(r *renderer, v any, args []any, kw *Map) (any, error) {
			p, err := bindArgs("in", []string{"seq"}, 1, args, kw)
			if err != nil {
				return nil, err
			}
			return contains(p.get(0, nil), v)
		}
	case "sameas":
		return func(r *renderer, v any, args []any, kw *Map) (any, error) {
			p, err := bindArgs("sameas", []string{"other"}, 1, args, kw)
			if err != nil {
				return nil, err
			}
			o := p.get(0, nil)
			switch v.(type) {
			case nil, bool, int64:
				return fmt.Sprintf("%T%v", v, v) == fmt.Sprintf("%T%v", o, o), nil
			case string:
				return v == o, nil
			}
			return sameObject(v, o), nil
		}
	case "filter":
		return pred(func(v any) bool { s, ok := v.(string); return ok && lookupFilter(s) != nil })
	case "test":
		return pred(func(v any) bool { s, ok := v.(string); return ok && lookupTest(s) != nil })
	}
	return nil
}

func pred(f func(any) bool) testFn {
	return func(r *renderer, v any, args []any, kw *Map) (any, error) {
		return f(v), nil
	}
}
