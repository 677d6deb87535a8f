package codereview

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Bounds of a diff that ParseDiff reads.
const (
	MaxDiffBytes = 4 << 20
	MaxFiles     = 1000
)

// File is one file of a unified diff: its path (the new one; OldPath
// when it was renamed or deleted) and its hunks. A binary file has
// none.
type File struct {
	Path, OldPath string
	Binary        bool
	Hunks         []Hunk
}

// Hunk is one hunk of a file: its header (@@ -a,b +c,d @@ context) and
// lines.
type Hunk struct {
	Header             string
	OldStart, NewStart int
	Lines              []Line
}

// Line is one line of a hunk: added ('+'), removed ('-') or context
// (' '), with its number on the old side (removed and context lines)
// and on the new side (added and context lines); 0 on a side it is not
// on.
type Line struct {
	Kind     byte
	Text     string
	Old, New int
}

// Side names the side of a diff a comment's line is on, as forges do:
// RIGHT is the new file (added and context lines), LEFT the old one
// (removed lines).
const (
	SideRight = "RIGHT"
	SideLeft  = "LEFT"
)

// ErrDiff is the error of a diff ParseDiff cannot read.
var ErrDiff = errors.New("codereview: not a unified diff")

// ParseDiff reads a unified diff, as git diff writes it (with or
// without its diff --git lines), at most MaxDiffBytes of at most
// MaxFiles files. Hunk line counts are checked against the lines that
// follow, so that every line number it gives is one the diff holds.
func ParseDiff(text string) ([]File, error) {
	if len(text) > MaxDiffBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrDiff, len(text), MaxDiffBytes)
	}
	var files []File
	var f *File
	var h *Hunk
	oldLeft, newLeft := 0, 0 // lines the open hunk still has
	oldNo, newNo := 0, 0     // the next line's numbers
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for n, l := range lines {
		if h != nil && (oldLeft > 0 || newLeft > 0) {
			kind := byte(' ')
			if l != "" {
				kind = l[0]
			}
			switch kind {
			case ' ':
				if oldLeft == 0 || newLeft == 0 {
					return nil, fmt.Errorf("%w: line %d: a context line past its hunk's counts", ErrDiff, n+1)
				}
				h.Lines = append(h.Lines, Line{Kind: ' ', Text: trimFirst(l), Old: oldNo, New: newNo})
				oldNo, newNo, oldLeft, newLeft = oldNo+1, newNo+1, oldLeft-1, newLeft-1
			case '-':
				if oldLeft == 0 {
					return nil, fmt.Errorf("%w: line %d: a removed line past its hunk's count", ErrDiff, n+1)
				}
				h.Lines = append(h.Lines, Line{Kind: '-', Text: l[1:], Old: oldNo})
				oldNo, oldLeft = oldNo+1, oldLeft-1
			case '+':
				if newLeft == 0 {
					return nil, fmt.Errorf("%w: line %d: an added line past its hunk's count", ErrDiff, n+1)
				}
				h.Lines = append(h.Lines, Line{Kind: '+', Text: l[1:], New: newNo})
				newNo, newLeft = newNo+1, newLeft-1
			case '\\': // \ No newline at end of file
			default:
				return nil, fmt.Errorf("%w: line %d: the hunk at %q ends %d lines short", ErrDiff, n+1, h.Header, max(oldLeft, newLeft))
			}
			continue
		}
		switch {
		case strings.HasPrefix(l, "diff --git "):
			if len(files) == MaxFiles {
				return nil, fmt.Errorf("%w: more than %d files", ErrDiff, MaxFiles)
			}
			files = append(files, File{})
			f, h = &files[len(files)-1], nil
			if a, b, ok := gitPaths(l[len("diff --git "):]); ok {
				f.OldPath, f.Path = a, b
			}
		case strings.HasPrefix(l, "--- "):
			if f == nil || len(f.Hunks) > 0 {
				if len(files) == MaxFiles {
					return nil, fmt.Errorf("%w: more than %d files", ErrDiff, MaxFiles)
				}
				files = append(files, File{})
				f = &files[len(files)-1]
			}
			h = nil
			f.OldPath = diffPath(l[4:]) // "" for a new file
		case strings.HasPrefix(l, "+++ ") && f != nil:
			f.Path = diffPath(l[4:]) // "" for a deleted file
		case strings.HasPrefix(l, "Binary files ") && f != nil:
			f.Binary = true
		case strings.HasPrefix(l, "@@ ") && f != nil:
			hk, ol, nl, err := hunkHeader(l)
			if err != nil {
				return nil, fmt.Errorf("%w: line %d: %v", ErrDiff, n+1, err)
			}
			f.Hunks = append(f.Hunks, hk)
			h = &f.Hunks[len(f.Hunks)-1]
			oldNo, newNo, oldLeft, newLeft = hk.OldStart, hk.NewStart, ol, nl
		}
	}
	if h != nil && (oldLeft > 0 || newLeft > 0) {
		return nil, fmt.Errorf("%w: the hunk at %q ends %d lines short", ErrDiff, h.Header, max(oldLeft, newLeft))
	}
	out := files[:0]
	for _, f := range files {
		if f.Path == "" && f.OldPath == "" {
			continue
		}
		if f.Path == "" {
			f.Path = f.OldPath // deleted: its comments are on the left
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no file in it", ErrDiff)
	}
	return out, nil
}

// trimFirst drops a context line's leading space ("" stays "": an
// empty line of a diff that lost its space).
func trimFirst(l string) string {
	if l == "" {
		return ""
	}
	return l[1:]
}

// diffPath is the path of a ---/+++ line: without its a/ or b/ prefix
// and a trailing tab and date; "" for /dev/null.
func diffPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	if s == "/dev/null" {
		return ""
	}
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		return s[2:]
	}
	return s
}

// gitPaths reads "a/x b/y" of a diff --git line.
func gitPaths(s string) (string, string, bool) {
	if !strings.HasPrefix(s, "a/") {
		return "", "", false
	}
	i := strings.Index(s, " b/")
	if i < 0 {
		return "", "", false
	}
	return s[2:i], s[i+3:], true
}

// hunkHeader reads "@@ -a[,b] +c[,d] @@ ...": the hunk, and its line
// counts on each side.
func hunkHeader(l string) (Hunk, int, int, error) {
	rest := l[3:]
	end := strings.Index(rest, " @@")
	if end < 0 {
		return Hunk{}, 0, 0, fmt.Errorf("a hunk header without its closing @@: %q", clipText(l, 80))
	}
	ranges := strings.Fields(rest[:end])
	if len(ranges) != 2 || ranges[0][0] != '-' || ranges[1][0] != '+' {
		return Hunk{}, 0, 0, fmt.Errorf("a hunk header without its two ranges: %q", clipText(l, 80))
	}
	os, ol, err1 := hunkRange(ranges[0][1:])
	ns, nl, err2 := hunkRange(ranges[1][1:])
	if err := errors.Join(err1, err2); err != nil {
		return Hunk{}, 0, 0, err
	}
	if os == 0 && ol > 0 || ns == 0 && nl > 0 {
		return Hunk{}, 0, 0, fmt.Errorf("a hunk range that starts at line 0 and has lines: %q", clipText(l, 80))
	}
	// A side of 0 lines starts before its first line: the next line
	// of that side would be its start+1, but there is none.
	if ol == 0 {
		os++
	}
	if nl == 0 {
		ns++
	}
	return Hunk{Header: clipText(l, 200), OldStart: os, NewStart: ns}, ol, nl, nil
}

// hunkRange reads "start[,count]"; count defaults to 1.
func hunkRange(s string) (start, count int, err error) {
	a, b, has := strings.Cut(s, ",")
	start, err = strconv.Atoi(a)
	count = 1
	if err == nil && has {
		count, err = strconv.Atoi(b)
	}
	if err != nil || start < 0 || count < 0 || count > MaxDiffBytes {
		return 0, 0, fmt.Errorf("a hunk range %q that is not start,count", clipText(s, 40))
	}
	return start, count, nil
}

// clipText cuts s to at most n bytes, at a character boundary.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}
