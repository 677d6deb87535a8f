package catalog

import (
	"fmt"
	"strings"
)

// PerMillion converts a price per million units, such as "2.00" USD per 1M
// tokens, into the exact price per unit, "0.000002", by moving the
// decimal point: no float is involved, so no rounding artefact appears.
func PerMillion(price string) (string, error) {
	if !isDecimal(price) {
		return "", fmt.Errorf("catalog: price %q is not a plain decimal", price)
	}
	whole, frac, _ := strings.Cut(price, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return "0", nil
	}
	// The value is digits × 10^-(len(frac)+6).
	scale := len(frac) + 6
	for len(digits) <= scale {
		digits = "0" + digits
	}
	out := digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	return out, nil
}

// isDecimal reports whether s is a non-negative decimal such as "0.5",
// "12" or "0.000002" (no sign, no exponent).
func isDecimal(s string) bool {
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || (dot && frac == "") {
		return false
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
