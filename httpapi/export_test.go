package httpapi

import "net/netip"

// PublicAddress is public, for tests: whether remote images may be
// fetched from a.
func PublicAddress(a netip.Addr) bool { return public(a) }
