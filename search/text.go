package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// MaxSnippetRunes bounds Result.Content, in characters.
const MaxSnippetRunes = 1000

// HTMLText returns the text of the first <title> element of src, and the
// rest of its text, as plain text for a Result: tags dropped, entities
// decoded, the contents of scripts, styles, templates, SVG and MathML
// skipped, a line break at each block element such as <p> or <li>, other
// runs of whitespace made one space, invalid UTF-8 dropped. src may be a
// whole document or a fragment; a document without a title gives "".
func HTMLText(src string) (title, text string) {
	z := html.NewTokenizer(strings.NewReader(src))
	var body, head strings.Builder
	skip := 0 // depth inside elements whose text is not content
	inHead, inTitle, seenTitle := false, false, false
	titleOpen := false // inside any <title>, whose text is never content
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return tidySpace(head.String()), tidySpace(body.String())
		case html.TextToken:
			switch {
			case inTitle:
				head.Write(z.Text())
			case skip == 0 && !inHead && !titleOpen:
				// Whitespace in HTML text is insignificant: a newline in
				// the source is a space on the page.
				body.WriteString(strings.Map(func(r rune) rune {
					if r == '\n' || r == '\r' || r == '\t' || r == '\f' {
						return ' '
					}
					return r
				}, string(z.Text())))
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if tt == html.SelfClosingTagToken {
				if blockAtoms[a] {
					body.WriteByte('\n')
				}
				continue
			}
			start := tt == html.StartTagToken
			switch a {
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Math:
				if start {
					skip++
				} else if skip > 0 {
					skip--
				}
			case atom.Head:
				inHead = start
			case atom.Title:
				// Only the document's title: not an SVG's, not a second one.
				titleOpen = start
				inTitle = start && !seenTitle && skip == 0
				seenTitle = seenTitle || inTitle
			default:
				if blockAtoms[a] {
					body.WriteByte('\n')
				}
			}
		}
	}
}

// blockAtoms are the elements that break a line.
var blockAtoms = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true,
	atom.Br: true, atom.Dd: true, atom.Details: true, atom.Div: true, atom.Dl: true,
	atom.Dt: true, atom.Fieldset: true, atom.Figcaption: true, atom.Figure: true,
	atom.Footer: true, atom.Form: true, atom.H1: true, atom.H2: true, atom.H3: true,
	atom.H4: true, atom.H5: true, atom.H6: true, atom.Header: true, atom.Hr: true,
	atom.Li: true, atom.Main: true, atom.Nav: true, atom.Ol: true, atom.P: true,
	atom.Pre: true, atom.Section: true, atom.Summary: true, atom.Table: true,
	atom.Td: true, atom.Th: true, atom.Tr: true, atom.Ul: true, atom.Body: true,
}

// plainText returns s without markup when it looks like HTML (holds a '<'
// or an entity), else s, with runs of whitespace collapsed to one space.
func plainText(s string) string {
	if strings.ContainsAny(s, "<&") {
		_, s = HTMLText(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

// tidySpace trims s, turns each run of whitespace that holds a line break
// into one line break and every other run into one space, and drops
// invalid UTF-8.
func tidySpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := rune(0) // ' ' or '\n' waiting to be written before the next word
	for _, r := range strings.ToValidUTF8(s, "") {
		if unicode.IsSpace(r) {
			if r == '\n' || pending == 0 {
				pending = ' '
				if r == '\n' {
					pending = '\n'
				}
			}
			continue
		}
		if pending != 0 && b.Len() > 0 {
			b.WriteRune(pending)
		}
		pending = 0
		b.WriteRune(r)
	}
	return b.String()
}

// Truncate returns s when it has at most n characters, else s cut to at
// most n characters with "…" marking the cut: at a space or line break
// when one is within 80 characters of the end, so that a word is not
// split, else in the middle of one. n of 0 or less gives "".
func Truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut, count := 0, 0
	for i := range s {
		if count == n-1 {
			cut = i
			break
		}
		count++
	}
	atWord := strings.ContainsAny(s[cut:cut+1], " \n")
	s = s[:cut]
	if sp := strings.LastIndexAny(s, " \n"); !atWord && sp > 0 && utf8.RuneCountInString(s[sp:]) < 80 {
		s = s[:sp]
	}
	return strings.TrimRight(s, " \n") + "…"
}
