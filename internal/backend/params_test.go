package backend

import "testing"

func TestParseCacheType(t *testing.T) {
	for s, want := range map[string]CacheType{"": CacheF16, "f16": CacheF16, "q8_0": CacheQ8_0, "q4_0": CacheQ4_0} {
		got, err := ParseCacheType(s)
		if err != nil || got != want || (s != "" && got.String() != s) {
			t.Errorf("ParseCacheType(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"F16", "q8", "bf16", "q4_1", " f16"} {
		if _, err := ParseCacheType(s); err == nil {
			t.Errorf("ParseCacheType(%q) accepted", s)
		}
	}
}
