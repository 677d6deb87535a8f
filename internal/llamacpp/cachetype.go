package llamacpp

import "fmt"

// CacheType is the element type of a KV cache. The zero value is f16.
type CacheType int

// The KV cache types: f16 (2 bytes an element), q8_0 (34 bytes a block of
// 32, about half of f16) and q4_0 (18 bytes a block of 32, about a
// quarter).
const (
	CacheF16 CacheType = iota
	CacheQ8_0
	CacheQ4_0
)

// ParseCacheType reads "f16", "q8_0" or "q4_0"; "" is f16.
func ParseCacheType(s string) (CacheType, error) {
	switch s {
	case "", "f16":
		return CacheF16, nil
	case "q8_0":
		return CacheQ8_0, nil
	case "q4_0":
		return CacheQ4_0, nil
	}
	return 0, fmt.Errorf("llamacpp: KV cache type %q: want f16, q8_0 or q4_0", s)
}

// String is the type's name, as ParseCacheType reads it.
func (t CacheType) String() string {
	switch t {
	case CacheQ8_0:
		return "q8_0"
	case CacheQ4_0:
		return "q4_0"
	}
	return "f16"
}

// Quantized reports whether t is a block-quantized type.
func (t CacheType) Quantized() bool { return t == CacheQ8_0 || t == CacheQ4_0 }
