package search

import (
	"errors"
	"net/url"
	"strings"
)

// normalizeDomain checks that d is a host name (labels of letters, digits
// and hyphens, or an IPv4 address) and returns it in lower case without a
// trailing dot. The error completes a sentence that starts with d.
func normalizeDomain(d string) (string, error) {
	if strings.Contains(d, "://") || strings.ContainsAny(d, "/:?#@") {
		return "", errors.New("is not a bare host name: give \"example.com\", without scheme, port or path")
	}
	n := strings.TrimSuffix(strings.ToLower(d), ".")
	if n == "" || len(n) > 253 {
		return "", errors.New("is not a host name: it must be 1 to 253 characters")
	}
	for _, label := range strings.Split(n, ".") {
		if label == "" || len(label) > 63 {
			return "", errors.New("is not a host name: each dot-separated label must be 1 to 63 characters")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return "", errors.New("is not a host name: a label may not start or end with a hyphen")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "", errors.New("is not a host name: use letters, digits and hyphens (the ASCII form of an international name)")
			}
		}
	}
	return n, nil
}

// hostAllowed reports whether host is one of domains or a subdomain of
// one: "example.com" allows "example.com" and "docs.example.com", never
// "badexample.com" nor "example.com.evil.net". domains must be normalized
// (normalizeDomain); no domains allows every host. host is compared
// without regard to case or a trailing dot; an empty host is never
// allowed by a non-empty list.
func hostAllowed(host string, domains []string) bool {
	if len(domains) == 0 {
		return true
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return false
	}
	for _, d := range domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// urlAllowed reports whether the host of rawURL passes hostAllowed.
func urlAllowed(rawURL string, domains []string) bool {
	if len(domains) == 0 {
		return true
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	return hostAllowed(u.Hostname(), domains)
}

// hostSuffixes returns host and each of its parent domains, such as
// "docs.example.com", "example.com" and "com": the terms an index stores
// so that a query for any allowed domain finds its subdomains too, by the
// same rule as hostAllowed.
func hostSuffixes(host string) []string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return nil
	}
	out := []string{host}
	for i := 0; i < len(host); i++ {
		if host[i] == '.' {
			out = append(out, host[i+1:])
		}
	}
	return out
}
