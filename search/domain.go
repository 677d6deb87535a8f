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

// AllowedURL reports whether rawURL may be a result of a query whose
// Domains are domains: always when domains is empty, else when the
// host of rawURL is one of domains or a subdomain of one, label by label.
// "example.com" allows https://example.com/ and
// https://docs.example.com:8443/a, never https://badexample.com/ nor
// https://example.com.evil.net/. Hosts and domains are compared without
// regard to case or a trailing dot, so both Query.Domains and the
// canonical ones of Query.Normalize work. A URL that does not parse, or
// has no host (a file URL), is never allowed by a non-empty list.
func AllowedURL(rawURL string, domains []string) bool {
	if len(domains) == 0 {
		return true
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	return hostAllowed(u.Hostname(), domains)
}

// hostAllowed reports whether host is one of domains or a subdomain of
// one, by AllowedURL's rule; no domains allows every host, an empty host
// none of a non-empty list.
func hostAllowed(host string, domains []string) bool {
	if len(domains) == 0 {
		return true
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return false
	}
	for _, d := range domains {
		d = strings.TrimSuffix(d, ".")
		switch {
		case d == "":
		case len(host) == len(d):
			if strings.EqualFold(host, d) {
				return true
			}
		case len(host) > len(d):
			cut := len(host) - len(d)
			if host[cut-1] == '.' && strings.EqualFold(host[cut:], d) {
				return true
			}
		}
	}
	return false
}
