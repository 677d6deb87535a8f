// Command codereview is a client of an inferkit server's code-review
// API (package codereview, served by examples/server): it sends a diff
// (a file, standard input, or a revision range of the git repository it
// runs in) to POST /v1/code-review/reviews (or summaries,
// release-notes, documentation) under an API key, and prints the
// summary, the comments by file and line, and what was not reviewed.
// The server's plan, quotas and limits apply; a refusal is printed as
// the server gave it.
//
//	codereview [-url URL] [-key KEY] [-model ID] [-security] [-rules FILE]
//	           [-kind review|summary|release-notes|documentation] [-user NAME] [SOURCE]
//
// SOURCE is a diff file, - for standard input (the default), or a
// revision range (main..HEAD) that git diff reads.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	o, err := parseFlags(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err == nil {
		err = run(ctx, o, os.Stdin, os.Stdout, http.DefaultClient)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "codereview:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	url, key, model, user string
	kind                  string // the route: reviews, summaries, release-notes or documentation
	security              bool
	rules                 string // the rules file's text
	source                string
}

// kinds maps -kind to its route.
var kinds = map[string]string{"review": "reviews", "summary": "summaries", "release-notes": "release-notes", "documentation": "documentation"}

// parseFlags reads the flags; the key comes from INFERKIT_API_KEY
// without -key.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("codereview", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.url, "url", "http://127.0.0.1:8080", "the inferkit server's `URL`")
	fs.StringVar(&o.key, "key", "", "the API `KEY` (default $INFERKIT_API_KEY)")
	fs.StringVar(&o.model, "model", "", "the model `ID` that reviews (default the server's review model; another needs a plan that brings its own)")
	fs.StringVar(&o.user, "user", "", "the `NAME` of the person asking, for the plan's seats (default the key)")
	kind := fs.String("kind", "review", "what to ask for: review, summary, release-notes or documentation")
	fs.BoolVar(&o.security, "security", false, "a security scan (plans with the security scan)")
	rules := fs.String("rules", "", "hold the diff to the team's rules in `FILE` (plans with custom rulesets)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.kind = kinds[*kind]; o.kind == "" {
		return o, fmt.Errorf("-kind %q: want review, summary, release-notes or documentation", *kind)
	}
	if o.key == "" {
		o.key = getenv("INFERKIT_API_KEY")
	}
	if o.key == "" {
		return o, errors.New("no API key: give -key or set INFERKIT_API_KEY")
	}
	if *rules != "" {
		b, err := os.ReadFile(*rules)
		if err != nil {
			return o, err
		}
		o.rules = string(b)
	}
	switch fs.NArg() {
	case 0:
		o.source = "-"
	case 1:
		o.source = fs.Arg(0)
	default:
		return o, fmt.Errorf("one SOURCE at most, got %q", fs.Args())
	}
	return o, nil
}

// readDiff reads the source: standard input, a file, or a revision
// range through git diff.
func readDiff(ctx context.Context, source string, stdin io.Reader) (string, error) {
	if source == "-" {
		b, err := io.ReadAll(stdin)
		return string(b), err
	}
	if b, err := os.ReadFile(source); err == nil {
		return string(b), nil
	}
	if strings.HasPrefix(source, "-") || !strings.Contains(source, "..") {
		return "", fmt.Errorf("%q is no diff file and no revision range (A..B)", source)
	}
	out, err := exec.CommandContext(ctx, "git", "diff", "--no-color", "--no-ext-diff", source, "--").Output()
	if err != nil {
		return "", fmt.Errorf("git diff %s: %w", source, err)
	}
	return string(out), nil
}

// review is the part of the server's answer that the command prints.
type review struct {
	Summary  string `json:"summary"`
	Comments []struct {
		Path, Side, Severity, Category, Body, Suggestion string
		Line                                             int
	} `json:"comments"`
	NotReviewed []struct {
		Path, Hunk, Reason string
	} `json:"not_reviewed"`
	Usage struct {
		Generations  int `json:"generations"`
		PromptTokens int `json:"prompt_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

// run sends the source's diff for review and prints the answer.
func run(ctx context.Context, o options, stdin io.Reader, w io.Writer, client *http.Client) error {
	diff, err := readDiff(ctx, o.source, stdin)
	if err != nil {
		return err
	}
	body := map[string]any{"diff": diff}
	if o.model != "" {
		body["model"] = o.model
	}
	if o.user != "" {
		body["user"] = o.user
	}
	if o.kind == "reviews" {
		body["security"] = o.security
		if o.rules != "" {
			body["rules"] = o.rules
		}
	} else if o.security || o.rules != "" {
		return errors.New("-security and -rules go with -kind review")
	}
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(o.url, "/")+"/v1/code-review/"+o.kind, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+o.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(out, &e) == nil && e.Error.Message != "" {
			return fmt.Errorf("the server answered %d: %s", res.StatusCode, e.Error.Message)
		}
		return fmt.Errorf("the server answered %d: %s", res.StatusCode, bytes.TrimSpace(out))
	}
	var rv review
	if err := json.Unmarshal(out, &rv); err != nil {
		return fmt.Errorf("the server's answer is not a review: %v", err)
	}
	if rv.Summary != "" {
		fmt.Fprintf(w, "%s\n", rv.Summary)
	}
	for _, c := range rv.Comments {
		fmt.Fprintf(w, "\n%s:%d (%s) [%s, %s]\n  %s\n", c.Path, c.Line, strings.ToLower(c.Side), c.Severity, c.Category, c.Body)
		if c.Suggestion != "" {
			fmt.Fprintf(w, "  suggestion: %s\n", c.Suggestion)
		}
	}
	for _, n := range rv.NotReviewed {
		fmt.Fprintf(w, "\nnot reviewed: %s %s: %s\n", n.Path, n.Hunk, n.Reason)
	}
	fmt.Fprintf(w, "\n(%d generations, %d prompt and %d output tokens)\n", rv.Usage.Generations, rv.Usage.PromptTokens, rv.Usage.OutputTokens)
	return nil
}
