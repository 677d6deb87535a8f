// Package routedoc reads the route lists written in package docs and
// the README, for the tests that check them against the route tables.
package routedoc

import (
	"regexp"
	"slices"
	"strings"
)

// line is a listed route: indented (a doc comment's "//\t" or the
// README's four spaces), a method, spaces, a path; a query or a
// description may follow.
var line = regexp.MustCompile(`^(?://\t|    )(GET|POST|PUT|PATCH|DELETE) +(/[^\s?]*)`)

// Listed returns the routes listed in text whose path starts with
// prefix, as "METHOD /path" patterns, sorted.
func Listed(text, prefix string) []string {
	var out []string
	for l := range strings.SplitSeq(text, "\n") {
		if m := line.FindStringSubmatch(l); m != nil && strings.HasPrefix(m[2], prefix) {
			out = append(out, m[1]+" "+m[2])
		}
	}
	slices.Sort(out)
	return out
}
