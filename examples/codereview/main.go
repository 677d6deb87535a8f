// Command codereview reviews git diffs and summarises them with a model
// run in process, under a code-review plan's monthly quotas.
//
//	codereview -model review=models/qwen3-0.6b.gguf -plan team -account acme -user ann HEAD~3..HEAD
//
// It takes one review and one summary from the account's plan for each
// diff: the working tree's changes (`git diff HEAD`, the default), each
// commit of a revision range A..B, or a diff read from standard input
// ("-"). An exhausted quota is refused with a message that says which and
// when it renews, and the other diffs go on. A review that fails gives
// its quota back.
//
// Flags:
//
//	-model PATH      the GGUF model (default: a demo model with random
//	                 weights, whose output is gibberish)
//	-plan NAME       free (25 reviews, 50 summaries, 1 user a month),
//	                 team, growth or enterprise (default free)
//	-account NAME    whose quotas count (default "local")
//	-user NAME       who reviews (default $USER)
//	-redis ADDR      count quotas in this Redis server, shared by every
//	                 run (default: in memory, for this run only)
//	-max-tokens N    the most tokens of each answer (default 512)
//	-threads N       CPU threads (default: all cores)
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/ratelimit"
	"github.com/inferkit/inferkit/ratelimit/redislimit"
)

// options are the command line's settings.
type options struct {
	model, account, user, redis string
	plan                        ratelimit.Plan
	maxTokens, threads          int
	source                      string // "", "-" or a revision range
}

// diff is one change to review.
type diff struct {
	name, text string
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	diffs, err := readDiffs(ctx, o.source, os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "codereview:", err)
		os.Exit(1)
	}
	quotas, closeQuotas, err := openQuotas(ctx, o.redis)
	if err != nil {
		fmt.Fprintln(os.Stderr, "codereview:", err)
		os.Exit(1)
	}
	defer closeQuotas()
	if o.model == "" {
		if o.model, err = demoModel(); err != nil {
			fmt.Fprintln(os.Stderr, "codereview:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "codereview: no -model given; using a demo model with RANDOM weights, whose output is gibberish")
	}
	eng, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "review", Path: o.model}}, Threads: o.threads})
	if err != nil {
		fmt.Fprintln(os.Stderr, "codereview:", err)
		os.Exit(1)
	}
	defer eng.Close()
	if err := run(ctx, o, eng, quotas, diffs, os.Stdout, time.Now); err != nil {
		fmt.Fprintln(os.Stderr, "codereview:", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	o := options{plan: ratelimit.Free}
	fs := flag.NewFlagSet("codereview", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.model, "model", "", "the GGUF model `PATH` (default a demo model with random weights)")
	fs.Func("plan", "the code-review `PLAN`: free, team, growth or enterprise (default free)", func(s string) error {
		p, err := ratelimit.LookupPlan(s)
		o.plan = p
		return err
	})
	fs.StringVar(&o.account, "account", "local", "the `ACCOUNT` whose quotas count")
	fs.StringVar(&o.user, "user", getenv("USER"), "the `USER` who reviews")
	fs.StringVar(&o.redis, "redis", "", "count quotas in the Redis server at `ADDR` (default in memory)")
	fs.IntVar(&o.maxTokens, "max-tokens", 512, "the most tokens of each answer")
	fs.IntVar(&o.threads, "threads", 0, "CPU threads (default all cores)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch fs.NArg() {
	case 0:
	case 1:
		o.source = fs.Arg(0)
	default:
		return o, fmt.Errorf("codereview: want at most one revision range or -, got %q", fs.Args())
	}
	if o.maxTokens <= 0 {
		return o, fmt.Errorf("codereview: -max-tokens %d", o.maxTokens)
	}
	return o, nil
}

// readDiffs returns the diffs of source: the working tree's changes
// (""), a diff on stdin ("-"), or each commit of a range ("A..B").
func readDiffs(ctx context.Context, source string, stdin io.Reader) ([]diff, error) {
	git := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "git", args...).Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), strings.TrimSpace(string(ee.Stderr)))
			}
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return string(out), nil
	}
	var diffs []diff
	switch {
	case source == "-":
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, diff{"stdin", string(b)})
	case source == "":
		d, err := git("diff", "HEAD")
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, diff{"working tree", d})
	case strings.Contains(source, ".."):
		revs, err := git("rev-list", "--reverse", source)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(strings.NewReader(revs))
		for sc.Scan() {
			d, err := git("show", "--format=%h %s%n", sc.Text())
			if err != nil {
				return nil, err
			}
			diffs = append(diffs, diff{sc.Text()[:min(12, len(sc.Text()))], d})
		}
	default:
		return nil, fmt.Errorf("%q is neither a revision range A..B nor -", source)
	}
	var out []diff
	for _, d := range diffs {
		if strings.TrimSpace(d.text) != "" {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no changes to review")
	}
	return out, nil
}

// openQuotas returns where the quotas are counted: in memory, or in the
// Redis server at addr.
func openQuotas(ctx context.Context, addr string) (ratelimit.Quotas, func() error, error) {
	if addr == "" {
		return ratelimit.NewMemory(), func() error { return nil }, nil
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, nil, fmt.Errorf("-redis %s: %w", addr, err)
	}
	l, err := redislimit.New(redislimit.Config{Client: rdb})
	if err != nil {
		rdb.Close()
		return nil, nil, err
	}
	return l, rdb.Close, nil
}

// Engine is what run needs of *inference.Engine.
type Engine interface {
	Generate(ctx context.Context, req inference.Request) (inference.Result, error)
}

// tasks are the two things done with each diff.
var tasks = []struct {
	title, system string
	quota         ratelimit.QuotaRequest
}{
	{"Review", "You are a careful code reviewer. Review the following git diff: point out bugs, risky changes and missing tests, each with the file and line it concerns. Be brief.",
		ratelimit.QuotaRequest{Reviews: 1}},
	{"Summary", "Summarise the following git diff in two or three sentences, for release notes.",
		ratelimit.QuotaRequest{Summaries: 1}},
}

// run reviews and summarises each diff, taking each task's quota first.
// A refused quota is reported and the run goes on; a failed generation
// gives its quota back and ends the run.
func run(ctx context.Context, o options, eng Engine, quotas ratelimit.Quotas, diffs []diff, w io.Writer, now func() time.Time) error {
	for _, d := range diffs {
		fmt.Fprintf(w, "== %s\n", d.name)
		for _, task := range tasks {
			q := task.quota
			q.Account, q.Plan, q.User = o.account, o.plan, o.user
			st, err := quotas.UseQuota(ctx, q, now())
			var e *ratelimit.Error
			if errors.As(err, &e) {
				fmt.Fprintf(w, "-- %s refused: the %s plan's quota of %d %s a month is used up for %s; it renews on %s.\n",
					task.title, o.plan.Name, e.Max, e.Limit, o.account, ratelimit.NextMonth(now()).Format("2006-01-02"))
				continue
			}
			if err != nil {
				return err
			}
			res, err := eng.Generate(ctx, inference.Request{
				Model: "review", MaxTokens: o.maxTokens, ClampMaxTokens: true,
				Messages: []inference.Message{
					inference.Text(inference.RoleSystem, task.system),
					inference.Text(inference.RoleUser, d.text),
				},
			})
			if err != nil {
				back := q
				back.Reviews, back.Summaries = -q.Reviews, -q.Summaries
				if _, berr := quotas.UseQuota(context.WithoutCancel(ctx), back, now()); berr != nil {
					err = errors.Join(err, berr)
				}
				return fmt.Errorf("%s of %s: %w", task.title, d.name, err)
			}
			fmt.Fprintf(w, "-- %s (%s)\n%s\n", task.title, left(st), strings.TrimSpace(res.Text))
		}
	}
	return nil
}

// left says what remains of the plan's quotas.
func left(st ratelimit.QuotaStatus) string {
	part := func(b ratelimit.Budget, what string) string {
		if b.Limit == 0 {
			return "unlimited " + what
		}
		return fmt.Sprintf("%d of %d %s left", b.Remaining, b.Limit, what)
	}
	return part(st.Reviews, "reviews") + ", " + part(st.Summaries, "summaries")
}

// demoModel writes the demo model into the user's cache directory once
// and returns its path.
func demoModel() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, "inferkit", "demo-random-v1.gguf")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	opts := inferencetest.Options{Layers: 4, Embd: 128, FF: 256, Seed: 1, Name: "inferkit demo (random weights)"}
	return path, inferencetest.WriteModel(path, opts)
}
