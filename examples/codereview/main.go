// Command codereview reviews git diffs and summarises them with a model
// run in process, under an account's code-review plan: its monthly
// quotas of reviews, summaries and users (seats), and its features.
//
//	codereview -accounts reviews.db trial team
//	codereview -accounts reviews.db -security -release-notes HEAD~3..HEAD
//	codereview -accounts reviews.db plan
//
// # Reviews
//
//	codereview [flags] [A..B | -]
//
// reviews and summarises the working tree's changes (`git diff HEAD`, the
// default), each commit of a revision range A..B, or a diff read from
// standard input ("-"). Each diff's review takes one review from the
// plan's monthly quota, its summary one summary, and the user (-user)
// takes one of the plan's seats for the month. An exhausted quota is
// refused with a message that says which, when it renews and which plan
// has more, and the other diffs go on. A failed generation gives its
// quota back.
//
// Three flags turn on features that plans gate (as in the spec's table):
//
//	-security        security scan: a second pass over each diff with a
//	                 security reviewer's prompt, part of the diff's review
//	                 (Team, Growth, Enterprise)
//	-release-notes   release notes: one more generation over all the diffs,
//	                 written as release notes; it takes one summary
//	                 (Team, Growth, Enterprise)
//	-rules FILE      custom rulesets: the file's rules are added to the
//	                 review prompt (Growth, Enterprise)
//
// A flag the plan lacks is refused before any model work, with a message
// that names the plan, the feature, the plans that include it with their
// price and trial, and the command that gets one. The spec's other
// features (analytics, memories, documentation, fine-tuning, context
// integrations, SSO, self-hosting, bring your own model, LLM
// observability) belong to a hosted service: this command does not offer
// them.
//
// # Where the plan comes from
//
// With -accounts PATH (a bbolt file) or -redis ADDR (a Redis server
// shared by every run), the plan is the one the store keeps for -account
// at the time of the run: Free, a paid plan, or a trial, which returns
// the account to Free when it ends. With -accounts the quota counts live
// in the same file and survive restarts; with -redis they live in Redis.
// An account the store lacks is created, on Free, on its first use (said
// on standard error): any name works, and the server's "default" account
// is the default. A bbolt file is one process's at a time (another run
// waits a while, then fails), so runs that overlap, or that share a
// running server's accounts, use -redis.
//
// Without a store, -plan NAME names the plan, and the quotas are counted
// in memory for this run only: a local simulation of a plan, not an
// entitlement.
//
// # Managing the plan
//
//	codereview plan [flags]               the plan, its state (trialing,
//	                                      active or expired), trial end,
//	                                      price, features, and this month's
//	                                      use of its quotas
//	codereview trial team|growth [flags]  start the plan's 14-day trial:
//	                                      one per plan per account, so a
//	                                      second is refused
//	codereview subscribe PLAN [flags]     put the account on free, team,
//	                                      growth or enterprise, paid: what a
//	                                      payment system calls once a
//	                                      subscription is bought; it takes
//	                                      no payment itself
//
// These need -accounts or -redis, and take only -accounts, -redis and
// -account. Flags may come before or after the command and its argument.
//
// Flags:
//
//	-accounts PATH   keep accounts and quota counts in this bbolt file
//	-redis ADDR      keep accounts and quota counts in this Redis server
//	                 (host:port, or a Unix socket's path)
//	-account ID      whose plan and quotas count (default "default")
//	-plan NAME       without a store: simulate free (25 reviews, 50
//	                 summaries, 1 user a month), team, growth or enterprise
//	                 (default free)
//	-user NAME       who reviews: a seat of the plan (default $USER)
//	-security, -release-notes, -rules FILE: see above
//	-model PATH      the GGUF model (default: a demo model with random
//	                 weights, whose output is gibberish)
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

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// The commands besides reviewing.
const (
	cmdPlan      = "plan"
	cmdTrial     = "trial"
	cmdSubscribe = "subscribe"
)

// options are the command line's settings.
type options struct {
	// command is "" (review), cmdPlan, cmdTrial or cmdSubscribe; target
	// is the plan that trial and subscribe name.
	command, target string
	// accountsPath and redis name the store; both "" is none.
	accountsPath, redis string
	account, user       string
	// plan is the -plan flag's, for runs without a store.
	plan ratelimit.Plan
	// security, releaseNotes and rules (the -rules file's text) ask for
	// the gated features.
	security, releaseNotes bool
	rules                  string
	model                  string
	maxTokens, threads     int
	source                 string // "", "-" or a revision range
}

// diff is one change to review.
type diff struct {
	name, text string
}

// env is what a run takes from its surroundings.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	now            func() time.Time
	// engine loads the model; execute calls it only once the plan
	// allows the run and there are diffs to review.
	engine func(o options) (Engine, func(), error)
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
	e := env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, now: time.Now, engine: loadEngine}
	if err := execute(ctx, o, e); err != nil {
		for line := range strings.Lines(err.Error()) { // each of joined errors
			fmt.Fprint(os.Stderr, "codereview: ", line)
		}
		fmt.Fprintln(os.Stderr)
		os.Exit(1)
	}
}

// usage is the help's synopsis; the flags follow it.
const usage = `usage:
  codereview [flags] [A..B | -]          review and summarise the working tree's
                                         changes, each commit of A..B, or stdin
  codereview plan [flags]                show the account's plan, its state, trial
                                         end, price, features and this month's use
  codereview trial team|growth [flags]   start the plan's 14-day trial (once per
                                         plan per account)
  codereview subscribe PLAN [flags]      put the account on free, team, growth or
                                         enterprise, paid: what a payment system
                                         calls once a subscription is bought (it
                                         takes no payment itself)

The plan is the stored account's with -accounts or -redis (plan, trial and
subscribe need one; an absent account is created on Free); without a store,
-plan simulates a plan for this run only. -security (Team+), -release-notes
(Team+) and -rules (Growth+) are the plan features this command offers; the
spec's others (analytics, memories, SSO...) it does not. A feature the plan
lacks is refused before any model work.

flags:
`

// parseFlags reads the command line. Flags may come before and after the
// command and its argument.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	o := options{plan: policy.Free}
	fs := flag.NewFlagSet("codereview", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	var rulesPath string
	fs.StringVar(&o.accountsPath, "accounts", "", "keep accounts and quota counts in the bbolt file at `PATH`")
	fs.StringVar(&o.redis, "redis", "", "keep accounts and quota counts in the Redis server at `ADDR` (host:port or a socket's path)")
	fs.StringVar(&o.account, "account", account.DefaultAccount, "the `ID` of the account whose plan and quotas count")
	fs.Func("plan", "without a store, simulate the `PLAN`: free, team, growth or enterprise (default free)", func(s string) error {
		p, err := policy.Plans().Lookup(s)
		o.plan = p
		return err
	})
	fs.StringVar(&o.user, "user", getenv("USER"), "the `USER` who reviews: one of the plan's seats")
	fs.BoolVar(&o.security, "security", false, "also scan each diff for security flaws (security scan: Team, Growth, Enterprise)")
	fs.BoolVar(&o.releaseNotes, "release-notes", false, "also write release notes of all the diffs, for one summary (Team, Growth, Enterprise)")
	fs.StringVar(&rulesPath, "rules", "", "add the rules in `FILE` to the review prompt (custom rulesets: Growth, Enterprise)")
	fs.StringVar(&o.model, "model", "", "the GGUF model `PATH` (default a demo model with random weights)")
	fs.IntVar(&o.maxTokens, "max-tokens", 512, "the most tokens of each answer")
	fs.IntVar(&o.threads, "threads", 0, "CPU threads (default all cores)")
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return o, err
		}
		if fs.NArg() == 0 {
			break
		}
		if n := len(rest) - fs.NArg(); n > 0 && rest[n-1] == "--" {
			pos = append(pos, fs.Args()...) // after --, only arguments
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.accountsPath != "" && o.redis != "" {
		return o, errors.New("codereview: give -accounts or -redis, not both")
	}
	stored := o.accountsPath != "" || o.redis != ""
	if len(pos) > 0 && (pos[0] == cmdPlan || pos[0] == cmdTrial || pos[0] == cmdSubscribe) {
		o.command, pos = pos[0], pos[1:]
		for _, name := range []string{"plan", "user", "security", "release-notes", "rules", "model", "max-tokens", "threads"} {
			if set[name] {
				return o, fmt.Errorf("codereview: -%s is for reviews, not for `codereview %s`", name, o.command)
			}
		}
		if !stored {
			return o, fmt.Errorf("codereview: `codereview %s` works on a stored account: give -accounts PATH or -redis ADDR", o.command)
		}
		return o, parseCommand(&o, pos)
	}
	if stored && set["plan"] {
		return o, errors.New("codereview: -plan simulates a plan without a store; with -accounts or -redis the account's stored plan counts (see `codereview plan`, `codereview trial`)")
	}
	switch len(pos) {
	case 0:
	case 1:
		o.source = pos[0]
	default:
		return o, fmt.Errorf("codereview: want at most one revision range or -, got %q", pos)
	}
	if o.maxTokens <= 0 {
		return o, fmt.Errorf("codereview: -max-tokens %d", o.maxTokens)
	}
	if o.user == "" {
		return o, errors.New("codereview: -user is empty and $USER unset: name who reviews, as each user takes one of the plan's seats")
	}
	if rulesPath != "" {
		b, err := os.ReadFile(rulesPath)
		if err != nil {
			return o, fmt.Errorf("codereview: -rules: %w", err)
		}
		if o.rules = strings.TrimSpace(string(b)); o.rules == "" {
			return o, fmt.Errorf("codereview: -rules %s holds no rules", rulesPath)
		}
	}
	return o, nil
}

// parseCommand reads the argument of plan, trial or subscribe.
func parseCommand(o *options, args []string) error {
	if o.command == cmdPlan {
		if len(args) > 0 {
			return fmt.Errorf("codereview: `codereview plan` takes no argument, got %q", args)
		}
		return nil
	}
	if len(args) != 1 {
		return fmt.Errorf("codereview: `codereview %s` wants one plan, got %q", o.command, args)
	}
	p, err := policy.Plans().Lookup(args[0])
	if err != nil {
		return err
	}
	if o.command == cmdTrial && p.Trial == 0 {
		return fmt.Errorf("codereview: the %s plan has no trial: team and growth have one", p.Name)
	}
	o.target = p.Name
	return nil
}

// execute does what the options say, with the store they name.
func execute(ctx context.Context, o options, e env) (err error) {
	s, err := openStore(ctx, o, e.now)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.close()) }()
	s.log = e.stderr
	switch o.command {
	case cmdPlan:
		return showPlan(ctx, s, o, e.stdout, e.now())
	case cmdTrial:
		return startTrial(ctx, s, o, e.stdout, e.now())
	case cmdSubscribe:
		return subscribe(ctx, s, o, e.stdout, e.now())
	}
	st, err := s.standing(ctx, o, e.now())
	if err != nil {
		return err
	}
	if err := checkFeatures(st, o); err != nil {
		return err
	}
	diffs, err := readDiffs(ctx, o.source, e.stdin)
	if err != nil {
		return err
	}
	eng, closeEngine, err := e.engine(o)
	if err != nil {
		return err
	}
	defer closeEngine()
	return run(ctx, o, st, eng, s.quotas, diffs, e.stdout, e.now)
}

// loadEngine loads the model of -model, or the demo model.
func loadEngine(o options) (Engine, func(), error) {
	if o.model == "" {
		var err error
		if o.model, err = demoModel(); err != nil {
			return nil, nil, err
		}
		fmt.Fprintln(os.Stderr, "codereview: no -model given; using a demo model with RANDOM weights, whose output is gibberish")
	}
	eng, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "review", Path: o.model}}, Threads: o.threads})
	if err != nil {
		return nil, nil, err
	}
	return eng, func() { eng.Close() }, nil
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
