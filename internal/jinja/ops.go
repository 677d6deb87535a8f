package jinja

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

func opError(op string, a, b any) error {
	return &Error{Message: fmt.Sprintf("unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(a), typeName(b))}
}

var errZeroDiv = &Error{Message: "division by zero"}

func errOverflow() error { return &Error{Message: "integer overflow"} }

// binop applies a Python arithmetic operator.
func binop(op string, a, b any) (any, error) {
	if s, ok := a.(string); ok && op == "%" {
		return percentFormat(s, b)
	}
	for _, v := range []any{a, b} {
		if u, ok := v.(*undefined); ok {
			return nil, u.fail()
		}
	}
	ai, aInt := asInt(a)
	bi, bInt := asInt(b)
	if aInt && bInt {
		return intOp(op, ai, bi)
	}
	if isNumber(a) && isNumber(b) {
		af, _ := asFloat(a)
		bf, _ := asFloat(b)
		return floatOp(op, af, bf)
	}
	switch op {
	case "+":
		switch x := a.(type) {
		case string:
			if y, ok := b.(string); ok {
				if len(x)+len(y) > maxOutputSize {
					return nil, &Error{Message: "string too large"}
				}
				return x + y, nil
			}
		case []any:
			if y, ok := b.([]any); ok {
				return append(append(make([]any, 0, len(x)+len(y)), x...), y...), nil
			}
		case tuple:
			if y, ok := b.(tuple); ok {
				return append(append(make(tuple, 0, len(x)+len(y)), x...), y...), nil
			}
		}
		if _, ok := a.(string); ok {
			return nil, &Error{Message: fmt.Sprintf("can only concatenate str (not \"%s\") to str", typeName(b))}
		}
	case "*":
		if bInt {
			return repeat(a, bi)
		}
		if aInt {
			return repeat(b, ai)
		}
	}
	return nil, opError(op, a, b)
}

func repeat(v any, n int64) (any, error) {
	if n < 0 {
		n = 0
	}
	switch x := v.(type) {
	case string:
		if n > 0 && int64(len(x)) > maxOutputSize/n {
			return nil, &Error{Message: "string too large"}
		}
		return strings.Repeat(x, int(n)), nil
	case []any:
		if n > 0 && int64(len(x)) > (1<<20)/n {
			return nil, &Error{Message: "list too large"}
		}
		out := make([]any, 0, int64(len(x))*n)
		for range n {
			out = append(out, x...)
		}
		return out, nil
	case tuple:
		l, err := repeat([]any(x), n)
		if err != nil {
			return nil, err
		}
		return tuple(l.([]any)), nil
	}
	return nil, opError("*", v, n)
}

func intOp(op string, a, b int64) (any, error) {
	switch op {
	case "+":
		s := a + b
		if (s > a) != (b > 0) {
			return nil, errOverflow()
		}
		return s, nil
	case "-":
		s := a - b
		if (s < a) != (b > 0) {
			return nil, errOverflow()
		}
		return s, nil
	case "*":
		if a == 0 || b == 0 {
			return int64(0), nil
		}
		hi, lo := bits.Mul64(uint64(absInt(a)), uint64(absInt(b)))
		if hi != 0 || lo > math.MaxInt64 || a == math.MinInt64 || b == math.MinInt64 {
			return nil, errOverflow()
		}
		if (a < 0) != (b < 0) {
			return -int64(lo), nil
		}
		return int64(lo), nil
	case "/":
		if b == 0 {
			return nil, errZeroDiv
		}
		return float64(a) / float64(b), nil
	case "//":
		if b == 0 {
			return nil, errZeroDiv
		}
		if a == math.MinInt64 && b == -1 {
			return nil, errOverflow()
		}
		q := a / b
		if (a%b != 0) && ((a < 0) != (b < 0)) {
			q--
		}
		return q, nil
	case "%":
		if b == 0 {
			return nil, &Error{Message: "integer modulo by zero"}
		}
		if b == -1 {
			return int64(0), nil
		}
		m := a % b
		if m != 0 && ((m < 0) != (b < 0)) {
			m += b
		}
		return m, nil
	case "**":
		if b < 0 {
			if a == 0 {
				return nil, &Error{Message: "0.0 cannot be raised to a negative power"}
			}
			return math.Pow(float64(a), float64(b)), nil
		}
		result := int64(1)
		base := a
		for e := b; e > 0; e >>= 1 {
			if e&1 == 1 {
				v, err := intOp("*", result, base)
				if err != nil {
					return nil, err
				}
				result = v.(int64)
			}
			if e > 1 {
				v, err := intOp("*", base, base)
				if err != nil {
					return nil, err
				}
				base = v.(int64)
			}
		}
		return result, nil
	}
	return nil, &Error{Message: "unknown operator " + op}
}

func absInt(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

func floatOp(op string, a, b float64) (any, error) {
	switch op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "/":
		if b == 0 {
			return nil, &Error{Message: "float division by zero"}
		}
		return a / b, nil
	case "//":
		if b == 0 {
			return nil, &Error{Message: "float floor division by zero"}
		}
		div, _ := floatDivmod(a, b)
		return div, nil
	case "%":
		if b == 0 {
			return nil, &Error{Message: "float modulo"}
		}
		_, mod := floatDivmod(a, b)
		return mod, nil
	case "**":
		if a == 0 && b < 0 {
			return nil, &Error{Message: "0.0 cannot be raised to a negative power"}
		}
		if a < 0 && b != math.Trunc(b) {
			return nil, &Error{Message: "complex results are not supported"}
		}
		return math.Pow(a, b), nil
	}
	return nil, &Error{Message: "unknown operator " + op}
}

// floatDivmod is CPython's float divmod, which floor division and modulo
// of floats follow.
func floatDivmod(vx, wx float64) (float64, float64) {
	mod := math.Mod(vx, wx)
	div := (vx - mod) / wx
	if mod != 0 {
		if (wx < 0) != (mod < 0) {
			mod += wx
			div -= 1.0
		}
	} else {
		mod = math.Copysign(0, wx)
	}
	var floordiv float64
	if div != 0 {
		floordiv = math.Floor(div)
		if div-floordiv > 0.5 {
			floordiv += 1.0
		}
	} else {
		floordiv = math.Copysign(0, vx/wx)
	}
	return floordiv, mod
}

func negate(v any) (any, error) {
	switch x := v.(type) {
	case bool, int64:
		n, _ := asInt(x)
		if n == math.MinInt64 {
			return nil, errOverflow()
		}
		return -n, nil
	case float64:
		return -x, nil
	case *undefined:
		return nil, x.fail()
	}
	return nil, &Error{Message: fmt.Sprintf("bad operand type for unary -: '%s'", typeName(v))}
}

// sliceIndices computes Python's slice.indices for a sequence of length n.
func sliceIndices(n int, start, stop, step any) (int, int, int, error) {
	st := 1
	if step != nil {
		s, ok := asInt(step)
		if !ok {
			return 0, 0, 0, &Error{Message: "slice indices must be integers or None"}
		}
		if s == 0 {
			return 0, 0, 0, &Error{Message: "slice step cannot be zero"}
		}
		st = int(max(min(s, math.MaxInt32), math.MinInt32))
	}
	conv := func(v any, def int) (int, error) {
		if v == nil {
			return def, nil
		}
		i, ok := asInt(v)
		if !ok {
			return 0, &Error{Message: "slice indices must be integers or None"}
		}
		i = max(min(i, math.MaxInt32), math.MinInt32)
		x := int(i)
		if x < 0 {
			x += n
			if x < 0 {
				if st < 0 {
					x = -1
				} else {
					x = 0
				}
			}
		} else if x >= n {
			if st < 0 {
				x = n - 1
			} else {
				x = n
			}
		}
		return x, nil
	}
	var lo, hi int
	var err error
	if st > 0 {
		if lo, err = conv(start, 0); err != nil {
			return 0, 0, 0, err
		}
		hi, err = conv(stop, n)
	} else {
		if lo, err = conv(start, n-1); err != nil {
			return 0, 0, 0, err
		}
		hi, err = conv(stop, -1)
	}
	return lo, hi, st, err
}

func sliceValue(obj, start, stop, step any) (any, error) {
	pick := func(n int) ([]int, error) {
		lo, hi, st, err := sliceIndices(n, start, stop, step)
		if err != nil {
			return nil, err
		}
		var idx []int
		if st > 0 {
			for i := lo; i < hi; i += st {
				idx = append(idx, i)
			}
		} else {
			for i := lo; i > hi; i += st {
				idx = append(idx, i)
			}
		}
		return idx, nil
	}
	switch x := obj.(type) {
	case string:
		rs := []rune(x)
		idx, err := pick(len(rs))
		if err != nil {
			return nil, err
		}
		out := make([]rune, len(idx))
		for i, j := range idx {
			out[i] = rs[j]
		}
		return string(out), nil
	case []any:
		idx, err := pick(len(x))
		if err != nil {
			return nil, err
		}
		out := make([]any, len(idx))
		for i, j := range idx {
			out[i] = x[j]
		}
		return out, nil
	case tuple:
		idx, err := pick(len(x))
		if err != nil {
			return nil, err
		}
		out := make(tuple, len(idx))
		for i, j := range idx {
			out[i] = x[j]
		}
		return out, nil
	case *undefined:
		return nil, x.fail()
	}
	return &undefined{hint: fmt.Sprintf("'%s object' has no element slice", typeName(obj))}, nil
}

// percentFormat implements Python's "format % values" for the common
// conversions (s, r, d, i, f, F, e, E, g, G, x, X, o, c, %).
func percentFormat(format string, values any) (any, error) {
	var args []any
	var mapping *Map
	mappingLike := false // Python skips the "not all arguments converted" check
	switch v := values.(type) {
	case tuple:
		args = v
	case *Map:
		mapping, mappingLike = v, true
		args = []any{v}
	case []any, *undefined:
		mappingLike = true
		args = []any{v}
	default:
		args = []any{v}
	}
	var b strings.Builder
	ai := 0
	next := func() (any, error) {
		if ai >= len(args) {
			return nil, &Error{Message: "not enough arguments for format string"}
		}
		ai++
		return args[ai-1], nil
	}
	rs := []rune(format)
	for i := 0; i < len(rs); i++ {
		if rs[i] != '%' {
			b.WriteRune(rs[i])
			continue
		}
		i++
		if i >= len(rs) {
			return nil, &Error{Message: "incomplete format"}
		}
		var key *string
		if rs[i] == '(' {
			j := i + 1
			for j < len(rs) && rs[j] != ')' {
				j++
			}
			if j >= len(rs) {
				return nil, &Error{Message: "incomplete format key"}
			}
			k := string(rs[i+1 : j])
			key = &k
			i = j + 1
		}
		spec := ""
		for i < len(rs) && strings.ContainsRune("#0- +", rs[i]) {
			spec += string(rs[i])
			i++
		}
		for i < len(rs) && (rs[i] >= '0' && rs[i] <= '9' || rs[i] == '.' || rs[i] == '*') {
			if rs[i] == '*' {
				w, err := next()
				if err != nil {
					return nil, err
				}
				n, _ := asInt(w)
				spec += fmt.Sprint(n)
			} else {
				spec += string(rs[i])
			}
			i++
		}
		if i >= len(rs) {
			return nil, &Error{Message: "incomplete format"}
		}
		conv := rs[i]
		if conv == '%' {
			b.WriteByte('%')
			continue
		}
		var arg any
		if key != nil {
			if mapping == nil {
				return nil, &Error{Message: "format requires a mapping"}
			}
			v, ok := mapping.get(*key)
			if !ok {
				return nil, &Error{Message: "KeyError: " + pyRepr(*key)}
			}
			arg = v
		} else {
			var err error
			if arg, err = next(); err != nil {
				return nil, err
			}
		}
		s, err := formatPercentOne(spec, conv, arg)
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
	}
	if !mappingLike && ai < len(args) {
		return nil, &Error{Message: "not all arguments converted during string formatting"}
	}
	return b.String(), nil
}

func formatPercentOne(spec string, conv rune, arg any) (string, error) {
	switch conv {
	case 's':
		return fmt.Sprintf("%"+spec+"s", toStr(arg)), nil
	case 'r', 'a':
		return fmt.Sprintf("%"+spec+"s", repr(arg)), nil
	case 'd', 'i', 'u':
		if f, ok := arg.(float64); ok {
			arg = int64(f)
		}
		n, ok := asInt(arg)
		if !ok {
			return "", &Error{Message: fmt.Sprintf("%%d format: a real number is required, not %s", typeName(arg))}
		}
		return fmt.Sprintf("%"+spec+"d", n), nil
	case 'x', 'X', 'o':
		n, ok := asInt(arg)
		if !ok {
			return "", &Error{Message: fmt.Sprintf("%%%c format: an integer is required, not %s", conv, typeName(arg))}
		}
		return fmt.Sprintf("%"+spec+string(conv), n), nil
	case 'f', 'F', 'e', 'E', 'g', 'G':
		f, ok := asFloat(arg)
		if !ok {
			return "", &Error{Message: fmt.Sprintf("must be real number, not %s", typeName(arg))}
		}
		if !strings.Contains(spec, ".") {
			spec += ".6"
		}
		return fmt.Sprintf("%"+spec+string(conv), f), nil
	case 'c':
		if n, ok := asInt(arg); ok {
			return string(rune(n)), nil
		}
		return toStr(arg), nil
	}
	return "", &Error{Message: fmt.Sprintf("unsupported format character '%c'", conv)}
}
