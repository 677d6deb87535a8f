package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Money is an amount of US dollars, counted in nano-dollars (10^-9 USD)
// so that sums are exact: a price of 0.15 USD per million tokens is 150
// nano-dollars per token. An int64 holds up to about 9.2 billion USD.
type Money int64

// Units of Money.
const (
	NanoDollar  Money = 1
	MicroDollar Money = 1_000
	Cent        Money = 10_000_000
	Dollar      Money = 1_000_000_000
)

// moneyDigits is the number of decimals Money keeps.
const moneyDigits = 9

// ParseMoney reads a non-negative decimal amount of dollars such as "0.5",
// "100" or "0.000002" (catalog prices are per token). It is exact: it
// refuses signs, exponents, more than nine decimals (finer than a
// nano-dollar) and amounts an int64 cannot hold. "" is 0.
func ParseMoney(s string) (Money, error) {
	if s == "" {
		return 0, nil
	}
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || (dot && frac == "") || !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("ratelimit: amount %q is not a plain decimal", s)
	}
	trimmed := strings.TrimRight(frac, "0")
	if len(trimmed) > moneyDigits {
		return 0, fmt.Errorf("ratelimit: amount %q is finer than a nano-dollar", s)
	}
	n, err := strconv.ParseInt(whole+trimmed+strings.Repeat("0", moneyDigits-len(trimmed)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("ratelimit: amount %q is too large", s)
	}
	return Money(n), nil
}

// digits reports whether s holds only ASCII digits.
func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// String formats m as a plain decimal of dollars without trailing zeros,
// such as "0.000002", "12.5" or "-3".
func (m Money) String() string {
	sign := ""
	u := uint64(m)
	if m < 0 {
		sign, u = "-", uint64(-(m+1))+1
	}
	s := strconv.FormatUint(u, 10)
	if len(s) <= moneyDigits {
		s = strings.Repeat("0", moneyDigits-len(s)+1) + s
	}
	whole, frac := s[:len(s)-moneyDigits], strings.TrimRight(s[len(s)-moneyDigits:], "0")
	if frac == "" {
		return sign + whole
	}
	return sign + whole + "." + frac
}

// Prices are what one request's usage costs, per unit.
type Prices struct {
	// Input is per prompt token not read from the cache.
	Input Money
	// CachedInput is per prompt token read from the prompt cache.
	CachedInput Money
	// Output is per generated token.
	Output Money
	// Request is per billed request.
	Request Money
	// Image is per input image.
	Image Money
}

// Usage counts what one request used, or reserves at most.
type Usage struct {
	// Requests is the number of billed requests: 1 for a request that
	// ran, 0 for one that failed before the engine did any work.
	Requests int64
	// InputTokens counts every prompt token, cached ones included.
	InputTokens int64
	// CachedInputTokens is the part of InputTokens read from the cache.
	CachedInputTokens int64
	// OutputTokens counts generated tokens, reasoning included.
	OutputTokens int64
	// Images counts input images.
	Images int64
}

// Cost returns what u costs at prices p. The result saturates at the
// largest Money rather than overflow.
func (p Prices) Cost(u Usage) Money {
	cached := min(max(u.CachedInputTokens, 0), max(u.InputTokens, 0))
	var total Money
	for _, term := range [...]struct {
		n     int64
		price Money
	}{
		{u.Requests, p.Request},
		{u.InputTokens - cached, p.Input},
		{cached, p.CachedInput},
		{u.OutputTokens, p.Output},
		{u.Images, p.Image},
	} {
		total = addMoney(total, mulMoney(max(term.n, 0), term.price))
	}
	return total
}

// mulMoney returns n × price, saturated.
func mulMoney(n int64, price Money) Money {
	if n == 0 || price == 0 {
		return 0
	}
	if int64(price) > math.MaxInt64/n {
		return math.MaxInt64
	}
	return Money(n * int64(price))
}

// addMoney returns a + b of non-negative amounts, saturated.
func addMoney(a, b Money) Money {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
