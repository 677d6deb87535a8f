package localindex

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/inferkit/inferkit/search"
)

// markdownTitle returns the text of the first heading of a Markdown
// document (ATX "# Title" or setext "Title" over "===="), skipping fenced
// code blocks; "" when it has none.
func markdownTitle(src string) string {
	fence := ""
	prev := ""
	for line := range strings.Lines(src) {
		line = strings.TrimRight(line, "\r\n")
		t := strings.TrimLeft(line, " ")
		indent := len(line) - len(t)
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]+" ") == "" {
				fence = ""
			}
			continue
		}
		if indent < 4 && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
			c := t[:1]
			fence = t[:len(t)-len(strings.TrimLeft(t, c))]
			prev = ""
			continue
		}
		if indent < 4 && strings.HasPrefix(t, "#") {
			level := len(t) - len(strings.TrimLeft(t, "#"))
			rest := t[level:]
			if level <= 6 && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
				rest = strings.TrimSpace(rest)
				// A closing sequence of #s is not part of the heading.
				if trimmed := strings.TrimRight(rest, "#"); trimmed == "" || strings.HasSuffix(trimmed, " ") {
					rest = strings.TrimSpace(trimmed)
				}
				if title := cleanTitle(rest); title != "" {
					return title
				}
			}
		}
		if indent < 4 && prev != "" && t != "" && strings.Trim(t, "= ") == "" {
			if title := cleanTitle(prev); title != "" {
				return title
			}
		}
		prev = strings.TrimSpace(line)
	}
	return ""
}

// cleanTitle drops inline code marks and emphasis from a Markdown heading.
func cleanTitle(s string) string {
	s = strings.NewReplacer("`", "", "**", "", "__", "").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// snippet returns at most n characters of text, whitespace collapsed,
// from the window that holds the most of the byte offsets of matched
// terms (the start of text when none), marked with "…" where cut.
func snippet(text string, offsets []int, n int) string {
	start := 0
	if len(offsets) > 0 && len(text) > n {
		slices.Sort(offsets)
		// The window of about n bytes that holds the most offsets, two
		// pointers over the sorted offsets; earliest wins ties.
		best, bestCount := offsets[0], 0
		for i, j := 0, 0; i < len(offsets); i++ {
			for j < len(offsets) && offsets[j] < offsets[i]+n*3/4 {
				j++
			}
			if j-i > bestCount {
				best, bestCount = offsets[i], j-i
			}
		}
		// Some context before the first match, from a word boundary.
		start = max(0, min(best, len(text))-n/8)
		for start > 0 && !utf8.RuneStart(text[start]) {
			start--
		}
		if sp := strings.IndexAny(text[start:min(best, len(text))], " \n\t"); start > 0 && sp >= 0 {
			start += sp + 1
		}
	}
	prefix := ""
	if strings.TrimSpace(text[:start]) != "" {
		prefix = "…"
	}
	room := n - utf8.RuneCountInString(prefix)
	// One character more than there is room for says whether to cut.
	body := collapseSpace(text[start:], room+1)
	if utf8.RuneCountInString(body) > room {
		body = search.Truncate(body, room)
	}
	return prefix + body
}

// collapseSpace returns the first n characters of s with leading and
// trailing whitespace dropped and each run of whitespace made one space;
// it reads no further into s than it needs.
func collapseSpace(s string, n int) string {
	var b strings.Builder
	count, space := 0, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			if count == n {
				break
			}
			b.WriteByte(' ')
			count++
			space = false
		}
		if count == n {
			break
		}
		b.WriteRune(r)
		count++
	}
	return b.String()
}
