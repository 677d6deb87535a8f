package codereview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"time"
)

// gitRef is what a range's base or head may be: a branch, tag or
// commit, with ~ and ^ suffixes, never an option.
var gitRef = regexp.MustCompile(`^[A-Za-z0-9_.@/^~][A-Za-z0-9_.@/^~-]{0,199}$`)

// gitTimeout bounds git diff of a range.
const gitTimeout = 30 * time.Second

// rangeDiff returns git diff base...head of the repository at dir: the
// changes of head since it left base, as a pull request shows them. A
// diff past MaxDiffBytes fails.
func rangeDiff(ctx context.Context, dir, base, head string) (string, error) {
	for field, ref := range map[string]string{"base": base, "head": head} {
		if !gitRef.MatchString(ref) || bytes.Contains([]byte(ref), []byte("..")) {
			return "", &FieldError{Field: field, Reason: fmt.Sprintf("%q is not a branch, tag or commit", ref)}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "diff", "--no-color", "--no-ext-diff", "--no-textconv", base+"..."+head, "--")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limitWriter{w: &out, left: MaxDiffBytes}, &limitWriter{w: &stderr, left: 4096}
	if err := cmd.Run(); err != nil {
		var lw *limitWriter
		if errors.As(err, &lw) || out.Len() >= MaxDiffBytes {
			return "", &FieldError{Field: "head", Reason: fmt.Sprintf("the range's diff is larger than %d bytes", MaxDiffBytes)}
		}
		return "", &FieldError{Field: "base", Reason: fmt.Sprintf("git diff %s...%s failed: %s", base, head, bytes.TrimSpace(stderr.Bytes()))}
	}
	if out.Len() == 0 {
		return "", &FieldError{Field: "head", Reason: fmt.Sprintf("%s has no changes since %s", head, base)}
	}
	return out.String(), nil
}

// limitWriter fails a write past its bound.
type limitWriter struct {
	w    *bytes.Buffer
	left int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if len(p) > l.left {
		return 0, l
	}
	l.left -= len(p)
	return l.w.Write(p)
}

func (l *limitWriter) Error() string { return "codereview: output past its bound" }
