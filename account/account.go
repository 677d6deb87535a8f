package account

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// DefaultAccount is the id of the account that owns the keys given to a
// server at start-up (Config.StaticKeys) and the admin API's keys when a
// request names no account.
const DefaultAccount = "default"

// Errors that callers branch on.
var (
	// ErrNotFound: no such account, key, session or document.
	ErrNotFound = errors.New("account: not found")
	// ErrExists: an account with that id or owner already exists.
	ErrExists = errors.New("account: already exists")
	// ErrInvalidKey: Authenticate does not know the key, or it was revoked.
	ErrInvalidKey = errors.New("account: invalid API key")
	// ErrInvalidLogin: Login's owner or password is wrong.
	ErrInvalidLogin = errors.New("account: invalid login")
	// ErrLoginLocked: an owner had MaxLoginFailures login attempts from
	// one client (or MaxOwnerLoginFailures from all) without a success
	// within LoginWindow; Login refuses them, checking no password,
	// until the window ends.
	ErrLoginLocked = errors.New("account: too many failed logins; try again later")
	// ErrBusy: Login's turn at one of Config.MaxConcurrentLogins
	// password checks did not come within Config.LoginQueueWait, or its client
	// had too many logins waiting already; it checked nothing and
	// counted no failure. Try again shortly.
	ErrBusy = errors.New("account: too many logins at once; try again shortly")
	// ErrTrialUsed: the account already had the trial of that plan.
	ErrTrialUsed = errors.New("account: trial already used")
	// ErrSubscribed: StartTrial on an account whose paid plan is active;
	// a trial is for accounts on Free or trialing another plan.
	ErrSubscribed = errors.New("account: already subscribed to a paid plan")
	// ErrSecretLost: the store holds keys or accounts but not the
	// operator secret they were made under, which is kept nowhere else
	// (no Config.Secret or SecretFile): New refuses to make another,
	// which would make every stored key fail. Give the secret back
	// (Config.Secret, SecretFile), or empty the store.
	ErrSecretLost = errors.New("account: the store lost the operator secret")
	// ErrSecretMismatch: the store's operator secret is not the one this
	// Accounts uses (Config.SecretFile's, or the one it read at New).
	ErrSecretMismatch = errors.New("account: the store's operator secret differs")
	// ErrUnavailable: the Store could not be reached (Redis down or
	// restarting): nothing was read or written, or a write's outcome is
	// unknown. Try again shortly; stores wrap their client's error with
	// it.
	ErrUnavailable = errors.New("account: the store is unavailable")
	// ErrPaymentUsed: AddCredits of a payment id that another account
	// was credited with: one payment credits one account.
	ErrPaymentUsed = errors.New("account: payment id already credited to another account")
	// ErrInvalid: an argument is out of its range; the error is an
	// *ArgError that names the argument.
	ErrInvalid = errors.New("account: invalid argument")
)

// ArgError is an argument out of its range: errors.Is(err, ErrInvalid)
// holds for it, and Arg names the argument as the admin API's fields do:
// "id", "name", "owner", "password", "tier", "plan", "amount" or
// "account".
type ArgError struct {
	// Arg is the argument.
	Arg string
	// Reason says what is wrong with it, for people.
	Reason string
	// Missing says the argument is absent or empty.
	Missing bool
}

// invalid returns an *ArgError.
func invalid(arg, format string, args ...any) *ArgError {
	return &ArgError{Arg: arg, Reason: fmt.Sprintf(format, args...)}
}

// missing returns an *ArgError of an absent argument.
func missing(arg, reason string) *ArgError { return &ArgError{Arg: arg, Reason: reason, Missing: true} }

// Error says which argument is wrong and why.
func (e *ArgError) Error() string { return "account: " + e.Arg + ": " + e.Reason }

// Is reports whether target is ErrInvalid.
func (e *ArgError) Is(target error) bool { return target == ErrInvalid }

// Account is one account's state. It is a value, read from the store.
type Account struct {
	// ID identifies the account: DefaultAccount, or "acct_" and random
	// letters for created accounts.
	ID string `json:"id"`
	// Name is for people.
	Name string `json:"name"`
	// Owner is the console login (an e-mail address); "" for an account
	// nobody signs in to.
	Owner string `json:"owner,omitzero"`
	// Created is when the account was made.
	Created time.Time `json:"created"`
	// Credits is the sum of the account's purchases.
	Credits ratelimit.Money `json:"credits"`
	// Drawn is what prepaid billing has drawn from Credits for settled
	// requests (see Balance); it stays 0 under postpaid billing.
	Drawn ratelimit.Money `json:"drawn,omitzero"`
	// Held is what requests in flight hold of the prepaid balance: the
	// maximum cost of each, until it settles.
	Held ratelimit.Money `json:"held,omitzero"`
	// PinnedTier is the tier the operator set with SetTier, by name; ""
	// means the tier follows Credits.
	PinnedTier string `json:"pinned_tier,omitzero"`
	// Plan is the code-review subscription.
	Plan Subscription `json:"plan"`

	// rules are the ladder and plans of the Accounts that returned the
	// Account; nil means hosted.
	rules *rules
}

// rules are the product's tiers and plans that Accounts applies:
// Config.Tiers and Config.Plans.
type rules struct {
	tiers   ratelimit.Ladder
	plans   ratelimit.Plans
	billing Billing
}

// hosted are the rules of a zero Config and of an Account that no
// Accounts returned: package policy's. Nothing changes them.
var hosted = &rules{tiers: policy.Tiers(), plans: policy.Plans(), billing: Postpaid}

// product returns the rules that Tier and PlanAt apply.
func (a Account) product() *rules {
	if a.rules == nil {
		return hosted
	}
	return a.rules
}

// Tier returns the account's rate-limit tier: PinnedTier if set, else
// the tier its Credits reach (Ladder.ForCredits), on the ladder of the
// Accounts that returned it (Config.Tiers; package policy's for an
// Account made otherwise). Under prepaid billing (Config.Billing) an
// account whose purchases do not reach the first tier's Credits (5 USD
// on the hosted ladder), and with no pinned tier, has no tier: Tier
// returns the zero Tier, whose Name is "", and Accounts.Limiter refuses
// its requests until a purchase unlocks one.
func (a Account) Tier() ratelimit.Tier {
	l := a.product().tiers
	if a.PinnedTier != "" {
		if t, err := l.Lookup(a.PinnedTier); err == nil {
			return t
		}
		// SetTier stores only names the ladder knows; a name it has
		// since forgotten falls back to the credits' tier.
	}
	if a.product().billing == Prepaid && (len(l.Tiers) == 0 || a.Credits < l.Tiers[0].Credits) {
		return ratelimit.Tier{}
	}
	return l.ForCredits(a.Credits)
}

// PlanState is where a subscription stands.
type PlanState string

// Plan states.
const (
	// PlanActive: a paid subscription (or Free, or Enterprise) in force.
	PlanActive PlanState = "active"
	// PlanTrialing: a trial before its end.
	PlanTrialing PlanState = "trialing"
	// PlanExpired: a trial ended without a subscription; the account is
	// on Free.
	PlanExpired PlanState = "expired"
)

// Subscription is an account's code-review plan as recorded: what
// PlanAt reads.
type Subscription struct {
	// Plan is the plan's name ("free", "team", "growth", "enterprise");
	// "" is free.
	Plan string `json:"plan,omitzero"`
	// TrialEnds is the end of a trial of Plan; zero for a subscription.
	TrialEnds time.Time `json:"trial_ends,omitzero"`
	// Since is when Plan started (the trial's or the subscription's
	// start).
	Since time.Time `json:"since,omitzero"`
	// Trials names the plans whose trial the account has started.
	Trials []string `json:"trials,omitzero"`
}

// PlanAt returns the plan in force at now and its state, among the plans
// of the Accounts that returned it (Config.Plans; package policy's for an
// Account made otherwise): a trial past TrialEnds is expired and its
// plan the base plan (Plans.Base, policy.Free). An account on no plan,
// or on a plan the plans no longer know, is on an active base plan.
func (a Account) PlanAt(now time.Time) (ratelimit.Plan, PlanState) {
	ps := a.product().plans
	p, err := ps.Lookup(a.Plan.Plan)
	if a.Plan.Plan == "" || err != nil {
		return ps.Base(), PlanActive
	}
	switch {
	case a.Plan.TrialEnds.IsZero():
		return p, PlanActive
	case now.Before(a.Plan.TrialEnds):
		return p, PlanTrialing
	}
	return ps.Base(), PlanExpired
}

// Key is an API key as listed: never its secret.
type Key struct {
	// ID names the key in logs, storage and the admin API.
	ID string `json:"id"`
	// Account owns the key.
	Account string `json:"account"`
	// Name is what its creator called it.
	Name string `json:"name"`
	// Hint shows the key's start and end, such as "sk-ik-AB…WXYZ", so
	// that people recognise it: 10 characters at most of 130 random bits.
	Hint string `json:"hint"`
	// Created is when it was made.
	Created time.Time `json:"created"`
	// LastUsed is when it last authenticated, to the minute; zero if
	// never, and always for a static key.
	LastUsed time.Time `json:"last_used,omitzero"`
	// Static marks a key of Config.StaticKeys: it lives in the server's
	// configuration, has no Created time and cannot be revoked.
	Static bool `json:"static,omitzero"`
}

// Purchase is a credit purchase.
type Purchase struct {
	// ID is the payment's id: a purchase recorded twice counts once.
	ID string `json:"id"`
	// Account is who bought.
	Account string `json:"account"`
	// Amount is what was paid, more than 0.
	Amount ratelimit.Money `json:"amount"`
	// At is when it was recorded.
	At time.Time `json:"at"`
}

// Principal is who an API key authenticates.
type Principal struct {
	// Key is the key, its LastUsed before this use.
	Key Key
	// Account is its account, as stored now.
	Account Account
}

// Session is a signed-in console session.
type Session struct {
	// Account is whose console it is.
	Account string `json:"account"`
	// CSRF is the token the session's forms carry.
	CSRF string `json:"csrf"`
	// Expires is when the session ends.
	Expires time.Time `json:"expires"`
	// Member is the e-mail address of the person who signed in through
	// single sign-on (StartSession); "" for the account's owner, who
	// signed in with the password (Login).
	Member string `json:"member,omitzero"`
}

// NewAccount describes an account to create.
type NewAccount struct {
	// ID is the account's id; "" makes one.
	ID string
	// Name is for people; required.
	Name string
	// Owner and Password are the console login; both or neither. The
	// password is kept as a PBKDF2-SHA-256 hash; 12 characters at least.
	Owner, Password string
}

// Store keeps small documents under string keys. NewMemory, OpenBolt and
// redisaccount.New implement it; accounttest.Run checks an
// implementation. Implementations must be safe for concurrent use, by
// several processes where they are shared (Redis), and durable once a
// call returns.
type Store interface {
	// Get returns the value of key, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Update replaces the value of key by fn(old), atomically: old is nil
	// when key is absent, and a nil result deletes it. fn may run more
	// than once when writers race; an error from fn aborts the update
	// and is returned. ttl > 0 makes the new value expire after ttl.
	Update(ctx context.Context, key string, ttl time.Duration, fn func(old []byte) ([]byte, error)) error
	// List returns the keys that begin with prefix, in order.
	List(ctx context.Context, prefix string) ([]string, error)
}

// Config configures Accounts.
type Config struct {
	// Store keeps everything. Required.
	Store Store
	// Secret is the operator's HMAC key (32 bytes or more). Nil means the
	// one kept in Store, made at random on first use: replicas sharing a
	// Store share it. It is never made again: a store that lost it while
	// it still holds keys or accounts (a Redis restarted without
	// persistence, FLUSHALL, eviction) is refused at New with
	// ErrSecretLost, and Check puts it back while serving.
	Secret []byte
	// SecretFile, with Secret nil, keeps a copy of the store's operator
	// secret in this file on local disk (hex, mode 0600), so that a store
	// that lost its data gets the secret back: New writes the file from
	// the store when the file does not exist, puts the file's secret back
	// into a store that lacks one, and refuses (ErrSecretMismatch) a
	// store whose secret differs from the file's. "" keeps none.
	SecretFile string
	// Logger receives what Accounts restores in a store that lost it
	// (the operator secret, DefaultAccount). Nil means slog.Default().
	Logger *slog.Logger
	// StaticKeys are API keys of DefaultAccount that live only in this
	// process's configuration (a server's -api-key flags): they
	// authenticate like created keys, and Keys lists them (Static set),
	// but they are not stored and cannot be revoked. Each is 1 to 1024
	// bytes.
	StaticKeys []string
	// PasswordIterations is the PBKDF2 work of the password hashes that
	// CreateAccount makes; each hash keeps its own, so changing it
	// leaves existing passwords valid. 0 means DefaultPasswordIterations;
	// lower it only in tests.
	PasswordIterations int
	// LoginQueueWait is how long a Login waits for its turn at a
	// password check before it returns ErrBusy. 0 means
	// DefaultLoginQueueWait.
	LoginQueueWait time.Duration
	// MaxConcurrentLogins bounds the password checks (PBKDF2 hashes of
	// PasswordIterations each) that Login runs at once, so that a flood
	// of sign-ins cannot take every CPU; a Login that finds them all
	// running waits its client's turn, LoginQueueWait at most, then
	// returns ErrBusy. 0 means max(1, GOMAXPROCS/2) at New.
	MaxConcurrentLogins int
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// Tiers is the product's tier ladder: which tier the credits of an
	// account reach, and which names SetTier may pin. The zero Ladder
	// means policy.Tiers(), the hosted Inference API's. New validates it.
	Tiers ratelimit.Ladder
	// Plans are the product's code-review plans, the first of them the
	// plan of an account on none. Nil means policy.Plans(), the hosted
	// Inference API's. New validates them.
	Plans ratelimit.Plans
	// Billing is how accounts pay: Postpaid (and "") counts their spend
	// under each tier's monthly cap, to be billed afterwards; Prepaid
	// draws every request's cost from the account's balance of
	// purchased credits (see Accounts.Limiter) and gives an account no
	// tier before its purchases reach the first.
	Billing Billing
}

// Accounts manages accounts, keys, credits, plans and console sessions
// on a Store. Create it with New. It is safe for concurrent use and has
// nothing to close (the caller closes its Store). Several Accounts may
// share a Store (replicas sharing Redis): each reads the store on every
// call and keeps nothing of it but the operator secret.
type Accounts struct {
	store  Store
	secret []byte
	// stored says the secret is kept in the store (Config.Secret nil),
	// so that Check puts it back when the store lost it.
	stored     bool
	log        *slog.Logger
	static     map[string]keyRecord // by id
	iterations int
	now        func() time.Time
	// rules are Config.Tiers and Config.Plans, or hosted.
	rules *rules
	// checks hands out the Config.MaxConcurrentLogins password checks
	// that Login runs at once.
	checks *checkQueue
	// queueWait is how long Login waits for a free check:
	// Config.LoginQueueWait.
	queueWait time.Duration
	// hashTime is how long the last password hash took, in nanoseconds:
	// how long Login waits for an unknown owner; 0 before the first.
	hashTime atomic.Int64
	// hashes counts the password hashes Login made, for tests.
	hashes atomic.Int64
}

// New validates cfg, makes DefaultAccount if the store lacks it, and
// returns Accounts.
func New(ctx context.Context, cfg Config) (*Accounts, error) {
	if cfg.Store == nil {
		return nil, errors.New("account: Config.Store is nil")
	}
	a := &Accounts{store: cfg.Store, now: cfg.Now, static: make(map[string]keyRecord), iterations: cfg.PasswordIterations}
	if a.now == nil {
		a.now = time.Now
	}
	switch cfg.Billing {
	case "", Postpaid:
		cfg.Billing = Postpaid
	case Prepaid:
	default:
		return nil, fmt.Errorf("account: Config.Billing is %q, want %q or %q", cfg.Billing, Postpaid, Prepaid)
	}
	if a.rules = hosted; !cfg.Tiers.IsZero() || cfg.Plans != nil || cfg.Billing != Postpaid {
		r := rules{tiers: policy.Tiers(), plans: policy.Plans(), billing: cfg.Billing}
		if !cfg.Tiers.IsZero() {
			if err := cfg.Tiers.Validate(); err != nil {
				return nil, fmt.Errorf("account: Config.Tiers: %w", err)
			}
			r.tiers = cloneLadder(cfg.Tiers)
		}
		if cfg.Plans != nil {
			if err := cfg.Plans.Validate(); err != nil {
				return nil, fmt.Errorf("account: Config.Plans: %w", err)
			}
			r.plans = slices.Clone(cfg.Plans)
			for i := range r.plans {
				r.plans[i].Features = slices.Clone(r.plans[i].Features)
			}
		}
		a.rules = &r
	}
	switch {
	case a.iterations < 0:
		return nil, fmt.Errorf("account: Config.PasswordIterations is %d, less than 0", a.iterations)
	case a.iterations == 0:
		a.iterations = DefaultPasswordIterations
	}
	switch n := cfg.MaxConcurrentLogins; {
	case n < 0:
		return nil, fmt.Errorf("account: Config.MaxConcurrentLogins is %d, less than 0", n)
	case n == 0:
		a.checks = newCheckQueue(max(1, runtime.GOMAXPROCS(0)/2))
	default:
		a.checks = newCheckQueue(n)
	}
	switch a.queueWait = cfg.LoginQueueWait; {
	case a.queueWait < 0:
		return nil, fmt.Errorf("account: Config.LoginQueueWait is %v, less than 0", a.queueWait)
	case a.queueWait == 0:
		a.queueWait = DefaultLoginQueueWait
	}
	if a.log = cfg.Logger; a.log == nil {
		a.log = slog.Default()
	}
	switch {
	case cfg.Secret == nil:
		secret, err := loadSecret(ctx, cfg.Store, cfg.SecretFile, a.log)
		if err != nil {
			return nil, err
		}
		a.secret, a.stored = secret, true
	case cfg.SecretFile != "":
		return nil, errors.New("account: Config.Secret and Config.SecretFile are both set: give one")
	case len(cfg.Secret) < secretBytes:
		return nil, fmt.Errorf("account: Config.Secret has %d bytes, fewer than %d", len(cfg.Secret), secretBytes)
	default:
		a.secret = slices.Clone(cfg.Secret)
	}
	for i, secret := range cfg.StaticKeys {
		if secret == "" || len(secret) > 1024 {
			return nil, fmt.Errorf("account: Config.StaticKeys[%d] has %d bytes, not 1 to 1024", i, len(secret))
		}
		sum, id := KeyDigest(a.secret, secret)
		a.static[id] = keyRecord{Key: Key{ID: id, Account: DefaultAccount, Name: "static key", Hint: keyHint(secret), Static: true}, Hash: sum}
	}
	if _, err := a.ensureDefault(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// ensureDefault makes DefaultAccount if the store lacks it, and reports
// whether it did.
func (a *Accounts) ensureDefault(ctx context.Context) (made bool, err error) {
	err = a.store.Update(ctx, docAccount+DefaultAccount, 0, func(old []byte) ([]byte, error) {
		if made = old == nil; !made {
			return old, nil
		}
		return json.Marshal(accountRecord{Account: Account{ID: DefaultAccount, Name: "Default", Created: a.now()}})
	})
	if err != nil {
		return false, fmt.Errorf("account: making the default account: %w", err)
	}
	return made, nil
}

// Check reports whether the store answers and holds what Accounts
// needs, and puts back what a store that lost its data (a Redis
// restarted without persistence, FLUSHALL, eviction) lost of it: the
// operator secret, when it is kept in the store, and DefaultAccount,
// whose static keys would fail without it. It never makes a new secret:
// a store that holds another is an error wrapping ErrSecretMismatch. A
// store out of reach is its error (ErrUnavailable for Redis). It reads
// two documents when nothing is missing; call it from a readiness probe.
// CreateKey calls it, so that no key is made under a secret the store
// has lost.
func (a *Accounts) Check(ctx context.Context) error {
	if a.stored {
		cur, err := a.store.Get(ctx, docSecret)
		switch {
		case errors.Is(err, ErrNotFound):
			if err := a.restoreSecret(ctx); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("account: reading the operator secret: %w", err)
		case !hmac.Equal(cur, a.secret):
			return fmt.Errorf("account: the store holds another operator secret than this process's, made since it started: %w", ErrSecretMismatch)
		}
	}
	_, err := a.store.Get(ctx, docAccount+DefaultAccount)
	switch {
	case errors.Is(err, ErrNotFound):
		made, err := a.ensureDefault(ctx)
		if made {
			a.log.Warn("account: the store had lost the default account; made it again (its credits, tier and plan are lost)")
		}
		return err
	case err != nil:
		return fmt.Errorf("account: reading the default account: %w", err)
	}
	return nil
}

// restoreSecret puts the operator secret back into a store that lost
// it, or fails with ErrSecretMismatch if another was put there first.
func (a *Accounts) restoreSecret(ctx context.Context) error {
	restored := false
	err := a.store.Update(ctx, docSecret, 0, func(old []byte) ([]byte, error) {
		switch {
		case old == nil:
			restored = true
			return slices.Clone(a.secret), nil
		case !hmac.Equal(old, a.secret):
			return nil, fmt.Errorf("account: the store holds another operator secret than this process's, made since it started: %w", ErrSecretMismatch)
		}
		return old, nil
	})
	if err != nil {
		return fmt.Errorf("account: restoring the operator secret: %w", err)
	}
	if restored {
		a.log.Warn("account: the store had lost the operator secret (a Redis restarted without persistence, FLUSHALL or eviction?); put this process's back, so that the keys made under it keep working")
	}
	return nil
}

// KeyID returns the id a key's secret has under the operator secret.
func (a *Accounts) KeyID(secret string) string {
	_, id := KeyDigest(a.secret, secret)
	return id
}

// CreateAccount makes an account; ErrExists if its id or owner is taken.
func (a *Accounts) CreateAccount(ctx context.Context, n NewAccount) (Account, error) {
	if n.ID == "" {
		n.ID = newID("acct_")
	} else if err := checkID(n.ID); err != nil {
		return Account{}, err
	}
	if err := checkName("account", n.Name); err != nil {
		return Account{}, err
	}
	r := accountRecord{Account: Account{ID: n.ID, Name: n.Name, Owner: n.Owner, Created: a.now(), rules: a.rules}}
	switch {
	case n.Owner == "" && n.Password == "":
	case n.Owner == "":
		return Account{}, missing("owner", "an account with a password has an owner")
	case n.Password == "":
		return Account{}, missing("password", "an account with an owner has a password")
	default:
		if err := checkOwner(n.Owner); err != nil {
			return Account{}, err
		}
		if c := utf8.RuneCountInString(n.Password); c < 12 || len(n.Password) > 1024 {
			return Account{}, invalid("password", "want 12 characters to 1024 bytes")
		}
		hash, err := hashPassword(n.Password, a.iterations)
		if err != nil {
			return Account{}, err
		}
		r.Password = hash
	}
	doc, err := json.Marshal(r)
	if err != nil {
		return Account{}, err
	}
	err = a.store.Update(ctx, docAccount+n.ID, 0, func(old []byte) ([]byte, error) {
		if old != nil {
			return nil, fmt.Errorf("account: account %q: %w", n.ID, ErrExists)
		}
		return doc, nil
	})
	if err != nil {
		return Account{}, err
	}
	if n.Owner == "" {
		return r.Account, nil
	}
	// The account first, then its owner: a crash between leaves an
	// account nobody signs in to, never an owner that cannot sign up.
	err = a.store.Update(ctx, ownerDoc(n.Owner), 0, func(old []byte) ([]byte, error) {
		if old != nil {
			return nil, fmt.Errorf("account: owner %q: %w", n.Owner, ErrExists)
		}
		return []byte(n.ID), nil
	})
	if err != nil {
		undo := a.store.Update(ctx, docAccount+n.ID, 0, func([]byte) ([]byte, error) { return nil, nil })
		return Account{}, errors.Join(err, undo)
	}
	return r.Account, nil
}

// Account returns an account, or ErrNotFound.
func (a *Accounts) Account(ctx context.Context, id string) (Account, error) {
	r, err := a.getAccount(ctx, id)
	return r.Account, err
}

// List returns every account, by id.
func (a *Accounts) List(ctx context.Context) ([]Account, error) {
	docs, err := a.store.List(ctx, docAccount)
	if err != nil {
		return nil, err
	}
	accounts := make([]Account, 0, len(docs))
	for _, doc := range docs {
		r, err := a.getAccount(ctx, strings.TrimPrefix(doc, docAccount))
		switch {
		case errors.Is(err, ErrNotFound):
			continue // removed since List
		case err != nil:
			return nil, err
		}
		accounts = append(accounts, r.Account)
	}
	return accounts, nil
}

// SetTier pins an account's tier by a name of Config.Tiers (the hosted
// "default", "tier2", "tier3", "unlimited"), or unpins it with "". An
// unknown name is ErrInvalid.
func (a *Accounts) SetTier(ctx context.Context, id, tier string) (Account, error) {
	if tier != "" {
		t, err := a.rules.tiers.Lookup(tier)
		if err != nil {
			return Account{}, invalid("tier", "%v", err)
		}
		tier = t.Name
	}
	return a.updateAccount(ctx, id, func(r *accountRecord) (bool, error) {
		r.PinnedTier = tier
		return true, nil
	})
}

// CreateKey makes a key for an account and returns it with its secret,
// which is shown to its creator once and stored nowhere. name is 1 to 100
// characters.
func (a *Accounts) CreateKey(ctx context.Context, account, name string) (Key, string, error) {
	if err := checkName("key", name); err != nil {
		return Key{}, "", err
	}
	// A key is made under the secret the store holds, never under one it
	// lost (it would fail after a restart).
	if err := a.Check(ctx); err != nil {
		return Key{}, "", err
	}
	if _, err := a.getAccount(ctx, account); err != nil {
		return Key{}, "", err
	}
	secret := KeyPrefix + rand.Text()
	sum, id := KeyDigest(a.secret, secret)
	r := keyRecord{Key: Key{ID: id, Account: account, Name: name, Hint: keyHint(secret), Created: a.now()}, Hash: sum}
	doc, err := json.Marshal(r)
	if err != nil {
		return Key{}, "", err
	}
	// The listing first, then the key: a crash between leaves a listed
	// id that Keys skips, never a key that works unlisted.
	err = a.store.Update(ctx, docAccountKey+account+"/"+r.ID, 0, func([]byte) ([]byte, error) { return []byte(r.ID), nil })
	if err != nil {
		return Key{}, "", err
	}
	err = a.store.Update(ctx, docKey+r.ID, 0, func(old []byte) ([]byte, error) {
		if old != nil {
			return nil, fmt.Errorf("account: key %s: %w", r.ID, ErrExists)
		}
		return doc, nil
	})
	if err != nil {
		return Key{}, "", err
	}
	return r.Key, secret, nil
}

// getKey reads a stored key's record.
func (a *Accounts) getKey(ctx context.Context, id string) (keyRecord, error) {
	var r keyRecord
	err := getJSON(ctx, a.store, docKey+id, &r)
	if errors.Is(err, ErrNotFound) {
		return r, fmt.Errorf("account: key %s: %w", id, ErrNotFound)
	}
	return r, err
}

// Keys lists an account's keys (stored and static), by creation time
// (static keys first), then id; ErrNotFound if there is no such account.
func (a *Accounts) Keys(ctx context.Context, account string) ([]Key, error) {
	if _, err := a.getAccount(ctx, account); err != nil {
		return nil, err
	}
	prefix := docAccountKey + account + "/"
	docs, err := a.store.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	var keys []Key
	if account == DefaultAccount {
		for _, r := range a.static {
			keys = append(keys, r.Key)
		}
	}
	for _, doc := range docs {
		r, err := a.getKey(ctx, strings.TrimPrefix(doc, prefix))
		switch {
		case errors.Is(err, ErrNotFound):
			continue // revoked, or its creation did not finish
		case err != nil:
			return nil, err
		}
		if r.Account == account {
			keys = append(keys, r.Key)
		}
	}
	slices.SortFunc(keys, func(x, y Key) int {
		if c := x.Created.Compare(y.Created); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return keys, nil
}

// Key returns a key by id (stored or static), or ErrNotFound.
func (a *Accounts) Key(ctx context.Context, id string) (Key, error) {
	if r, ok := a.static[id]; ok {
		return r.Key, nil
	}
	r, err := a.getKey(ctx, id)
	return r.Key, err
}

// RevokeKey deletes a key: it no longer authenticates, on any replica.
// account "" matches any account; a key of another account, or a static
// key, is ErrNotFound.
func (a *Accounts) RevokeKey(ctx context.Context, account, id string) error {
	if _, ok := a.static[id]; ok {
		return fmt.Errorf("account: key %s is a static key of the server's configuration, which cannot be revoked: %w", id, ErrNotFound)
	}
	var owner string
	err := a.store.Update(ctx, docKey+id, 0, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, fmt.Errorf("account: key %s: %w", id, ErrNotFound)
		}
		var r keyRecord
		if err := json.Unmarshal(old, &r); err != nil {
			return nil, fmt.Errorf("account: document %q: %w", docKey+id, err)
		}
		if account != "" && r.Account != account {
			return nil, fmt.Errorf("account: key %s of account %q: %w", id, account, ErrNotFound)
		}
		owner = r.Account
		return nil, nil
	})
	if err != nil {
		return err
	}
	// The key is gone (it no longer authenticates); now its listing.
	return a.store.Update(ctx, docAccountKey+owner+"/"+id, 0, func([]byte) ([]byte, error) { return nil, nil })
}

// Authenticate returns who secret belongs to, or ErrInvalidKey. It
// compares HMACs in constant time and records the key's use at most once
// a minute. It reads the store on every call (the key, then its
// account), so a key revoked on another replica is refused at once; an
// error of the store is returned as it is, not as ErrInvalidKey.
func (a *Accounts) Authenticate(ctx context.Context, secret string) (Principal, error) {
	if secret == "" || len(secret) > 1024 {
		return Principal{}, ErrInvalidKey
	}
	sum, id := KeyDigest(a.secret, secret)
	r, static := a.static[id]
	if !static {
		var err error
		r, err = a.getKey(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return Principal{}, ErrInvalidKey
		}
		if err != nil {
			return Principal{}, err
		}
	}
	if !hmac.Equal(r.Hash, sum) {
		return Principal{}, ErrInvalidKey
	}
	acct, err := a.getAccount(ctx, r.Account)
	if errors.Is(err, ErrNotFound) && static {
		// The store lost DefaultAccount (Redis lost its data): a static
		// key lives in the configuration, and keeps working.
		if err = a.Check(ctx); err == nil {
			acct, err = a.getAccount(ctx, r.Account)
		}
	}
	if errors.Is(err, ErrNotFound) {
		return Principal{}, ErrInvalidKey
	}
	if err != nil {
		return Principal{}, err
	}
	if minute := a.now().UTC().Truncate(time.Minute); !static && r.LastUsed.Before(minute) {
		err := a.store.Update(ctx, docKey+id, 0, func(old []byte) ([]byte, error) {
			if old == nil {
				return nil, ErrInvalidKey // revoked meanwhile: keep it revoked, and refuse it
			}
			var cur keyRecord
			if err := json.Unmarshal(old, &cur); err != nil {
				return nil, fmt.Errorf("account: document %q: %w", docKey+id, err)
			}
			if !cur.LastUsed.Before(minute) {
				return old, nil // another replica recorded it
			}
			cur.LastUsed = minute
			return json.Marshal(cur)
		})
		if errors.Is(err, ErrInvalidKey) {
			return Principal{}, ErrInvalidKey
		}
		if err != nil {
			return Principal{}, fmt.Errorf("account: recording the use of key %s: %w", id, err)
		}
	}
	return Principal{Key: r.Key, Account: acct.Account}, nil
}

// AddCredits records a purchase and returns the account after it; a
// purchase whose ID the account recorded before changes nothing and
// returns the account as it is. A payment id credits one account only:
// one that another account recorded is ErrPaymentUsed. The id is claimed
// for the account first (one atomic Update of the id's document, so that
// calls racing on two accounts credit one), then the purchase and the
// credits change in one Update of the account, so that retries racing
// each other count once; a claim whose credit did not follow (a crash
// between) is completed by a retry on the same account. p.At zero means
// now.
func (a *Accounts) AddCredits(ctx context.Context, p Purchase) (Account, error) {
	switch {
	case p.ID == "":
		return Account{}, missing("id", "a purchase has an id")
	case len(p.ID) > 200:
		return Account{}, invalid("id", "a purchase id has 1 to 200 bytes")
	case p.Amount <= 0:
		return Account{}, invalid("amount", "%s is not more than 0", p.Amount)
	case p.Account == "":
		return Account{}, missing("account", "a purchase names its account")
	}
	if p.At.IsZero() {
		p.At = a.now()
	}
	if _, err := a.getAccount(ctx, p.Account); err != nil {
		return Account{}, err // an unknown account claims no id
	}
	claimed := false
	err := a.store.Update(ctx, docPayment+p.ID, 0, func(old []byte) ([]byte, error) {
		claimed = old == nil
		switch {
		case old == nil:
			return []byte(p.Account), nil
		case string(old) != p.Account:
			return nil, fmt.Errorf("account: payment id %q: %w", p.ID, ErrPaymentUsed)
		}
		return old, nil
	})
	if err != nil {
		return Account{}, err
	}
	acct, err := a.updateAccount(ctx, p.Account, func(r *accountRecord) (bool, error) {
		if slices.ContainsFunc(r.Purchases, func(q Purchase) bool { return q.ID == p.ID }) {
			return false, nil
		}
		if r.Credits > math.MaxInt64-p.Amount {
			return false, invalid("amount", "the credits of account %q would overflow", p.Account)
		}
		r.Purchases = append(r.Purchases, p)
		r.Credits += p.Amount
		return true, nil
	})
	if err != nil && claimed && !errors.Is(err, ErrUnavailable) {
		// Refused (the account removed meanwhile, or full): the id
		// credited nothing, so it is free again.
		undo := a.store.Update(context.WithoutCancel(ctx), docPayment+p.ID, 0, func(old []byte) ([]byte, error) {
			if string(old) == p.Account {
				return nil, nil
			}
			return old, nil
		})
		err = errors.Join(err, undo)
	}
	return acct, err
}

// Purchases lists an account's purchases, oldest first.
func (a *Accounts) Purchases(ctx context.Context, account string) ([]Purchase, error) {
	r, err := a.getAccount(ctx, account)
	return r.Purchases, err
}

// StartTrial starts the trial of a plan of Config.Plans that has one
// (the hosted Team, Growth):
// ErrTrialUsed if the account had it before, ErrInvalid for a plan
// without a trial, ErrSubscribed while a paid plan is active.
func (a *Accounts) StartTrial(ctx context.Context, account, plan string) (Account, error) {
	p, err := a.rules.plans.Lookup(plan)
	if err != nil {
		return Account{}, invalid("plan", "%v", err)
	}
	if p.Trial <= 0 {
		return Account{}, invalid("plan", "plan %s has no trial", p.Name)
	}
	return a.updateAccount(ctx, account, func(r *accountRecord) (bool, error) {
		now := a.now()
		if slices.Contains(r.Plan.Trials, p.Name) {
			return false, fmt.Errorf("account: account %q, plan %s: %w", account, p.Name, ErrTrialUsed)
		}
		if cur, state := r.PlanAt(now); state == PlanActive && cur.Name != a.rules.plans.Base().Name {
			return false, fmt.Errorf("account: account %q is on plan %s: %w", account, cur.Name, ErrSubscribed)
		}
		r.Plan = Subscription{Plan: p.Name, TrialEnds: now.Add(p.Trial), Since: now, Trials: append(r.Plan.Trials, p.Name)}
		return true, nil
	})
}

// Subscribe puts an account on a plan of Config.Plans, paid (what a payment system calls
// when a subscription is bought or changed): active, no trial. An
// unknown plan is ErrInvalid.
func (a *Accounts) Subscribe(ctx context.Context, account, plan string) (Account, error) {
	p, err := a.rules.plans.Lookup(plan)
	if err != nil {
		return Account{}, invalid("plan", "%v", err)
	}
	return a.updateAccount(ctx, account, func(r *accountRecord) (bool, error) {
		r.Plan = Subscription{Plan: p.Name, Since: a.now(), Trials: r.Plan.Trials}
		return true, nil
	})
}

// MaxLoginFailures login attempts of one owner from one client without
// a success, each within LoginWindow of the one before, lock that
// client's logins of that owner (ErrLoginLocked) until LoginWindow after
// the last, on every replica that shares the store: guessing passwords
// online stays slow, and a client that guesses locks itself out, not the
// owner. MaxOwnerLoginFailures attempts of one owner from all clients
// together lock the owner's logins from every client alike, so that many
// clients cannot guess more than that many passwords of one owner per
// LoginWindow either.
const (
	MaxLoginFailures      = 10
	MaxOwnerLoginFailures = 100
	LoginWindow           = 15 * time.Minute
)

// DefaultLoginQueueWait is how long Login waits for its turn at one of
// Config.MaxConcurrentLogins password checks, when
// Config.LoginQueueWait is 0, before it returns ErrBusy.
const DefaultLoginQueueWait = 10 * time.Second

// Login checks an owner's password and starts a console session of
// SessionTTL; it returns the session's token, to keep in a cookie.
// client names where the attempt comes from (the console gives the
// client's address; "" is one client like any other): the password
// checks are shared fairly between clients, so that one client's flood
// of attempts waits behind its own, not behind others', and failures
// lock the client that made them (see MaxLoginFailures).
//
// An unknown owner and a wrong password are both ErrInvalidLogin, and
// take as long; both count towards the locks, so that a lock says
// nothing about whether the owner exists. An unknown owner costs no
// password hash: it waits for its turn as a known one does, then gives
// the check back at once and waits as long as the last hash took, so
// that attempts for owners who do not exist, however many, cannot keep
// real owners from signing in.
//
// Each attempt is counted before its password is checked, in atomic
// Updates that refuse it (ErrLoginLocked) once a count has reached its
// limit: however many attempts race, on however many replicas, at most
// MaxLoginFailures passwords of an owner are checked per client and
// LoginWindow, which restarts with each attempt counted, and at most
// MaxOwnerLoginFailures from all clients. A successful login clears both
// counts. Config.MaxConcurrentLogins checks run at once; a login waits
// its client's turn for one, Config.LoginQueueWait at most (or until ctx
// ends), and a client with 8 logins already waiting gets ErrBusy at
// once; ErrBusy uncounts the attempt.
func (a *Accounts) Login(ctx context.Context, client, owner, password string) (string, Session, error) {
	docs := []string{a.loginFailDoc(owner, client, false), a.loginFailDoc(owner, "", true)}
	for i, doc := range docs {
		if err := a.countLogin(ctx, doc, []int{MaxLoginFailures, MaxOwnerLoginFailures}[i]); err != nil {
			// Nothing was checked: give back what was counted.
			return "", Session{}, errors.Join(err, a.uncountLogin(ctx, docs[:i]))
		}
	}
	if err := a.checks.acquire(ctx, client, a.queueWait); err != nil {
		// Nothing was checked: give the attempt back, even when ctx has
		// ended, so that a busy server locks nobody out.
		return "", Session{}, errors.Join(err, a.uncountLogin(ctx, docs))
	}
	r, known, err := a.lookupOwner(ctx, owner)
	if err != nil {
		a.checks.release()
		return "", Session{}, err
	}
	if !known {
		a.pretendCheck(ctx)
		return "", Session{}, ErrInvalidLogin
	}
	began := time.Now()
	a.hashes.Add(1)
	ok := checkPassword(r.Password, password)
	a.checks.release()
	a.hashTime.Store(int64(time.Since(began)))
	if !ok {
		return "", Session{}, ErrInvalidLogin
	}
	token, s, err := a.startSession(ctx, r.ID, "")
	if err != nil {
		return "", Session{}, err
	}
	// The right password: the owner's failures are forgiven.
	for _, doc := range docs {
		if err := a.store.Update(ctx, doc, 0, func([]byte) ([]byte, error) { return nil, nil }); err != nil {
			return "", Session{}, err
		}
	}
	return token, s, nil
}

// countLogin counts a login attempt in doc, or refuses it with
// ErrLoginLocked once the count has reached limit.
func (a *Accounts) countLogin(ctx context.Context, doc string, limit int) error {
	return a.store.Update(ctx, doc, LoginWindow, func(old []byte) ([]byte, error) {
		n := atoiOr0(old)
		if n >= limit {
			return nil, ErrLoginLocked
		}
		return []byte(strconv.Itoa(n + 1)), nil
	})
}

// uncountLogin takes back an attempt that countLogin counted in docs,
// even when ctx has ended.
func (a *Accounts) uncountLogin(ctx context.Context, docs []string) error {
	var errs []error
	for _, doc := range docs {
		err := a.store.Update(context.WithoutCancel(ctx), doc, LoginWindow, func(old []byte) ([]byte, error) {
			if n := atoiOr0(old); n > 1 {
				return []byte(strconv.Itoa(n - 1)), nil
			}
			return nil, nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("account: uncounting a login attempt: %w", err))
		}
	}
	return errors.Join(errs...)
}

// pretendCheck stands for the password check of an unknown owner, with
// a check that acquire gave: it gives the check back and waits as long
// as the last hash took (or ctx's end). Before any hash was timed, it
// hashes once, holding the check, to time one.
func (a *Accounts) pretendCheck(ctx context.Context) {
	d := time.Duration(a.hashTime.Load())
	if d <= 0 {
		began := time.Now()
		a.hashes.Add(1)
		checkPassword(dummyPassword(a.iterations), "")
		a.checks.release()
		a.hashTime.Store(int64(time.Since(began)))
		return
	}
	a.checks.release()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// loginFailDoc is the document that counts an owner's login attempts
// from client, or from every client when all is set.
func (a *Accounts) loginFailDoc(owner, client string, all bool) string {
	if all {
		return docLoginFail + hex.EncodeToString(a.mac(domainLogin, strings.ToLower(owner)))
	}
	return docLoginFail + hex.EncodeToString(a.mac(domainLoginClient, strings.ToLower(owner)+"\x00"+client))
}

// atoiOr0 reads a count a store holds; anything else is 0.
func atoiOr0(b []byte) int {
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return 0
	}
	return n
}

// StartSession starts a console session of SessionTTL for member, a
// person whom a single sign-on provider vouched for (the console checks
// the provider's ID token, the member's domain and the account's plan),
// and returns its token, to keep in a cookie. It checks no password:
// its caller has authenticated member. ErrNotFound if the account does
// not exist, ErrInvalid for an empty member.
func (a *Accounts) StartSession(ctx context.Context, account, member string) (string, Session, error) {
	if member == "" || len(member) > 320 {
		return "", Session{}, invalid("member", "is empty or longer than 320 bytes")
	}
	if _, err := a.getAccount(ctx, account); err != nil {
		return "", Session{}, err
	}
	return a.startSession(ctx, account, member)
}

// startSession starts a console session of an account for member (""
// for its owner, whose password was checked) and returns its token.
func (a *Accounts) startSession(ctx context.Context, account, member string) (string, Session, error) {
	token := rand.Text()
	s := Session{Account: account, Member: member, CSRF: rand.Text(), Expires: a.now().Add(SessionTTL)}
	doc, err := json.Marshal(s)
	if err != nil {
		return "", Session{}, err
	}
	err = a.store.Update(ctx, a.sessionDoc(token), SessionTTL, func(old []byte) ([]byte, error) {
		if old != nil {
			return nil, fmt.Errorf("account: a new session's token: %w", ErrExists)
		}
		return doc, nil
	})
	if err != nil {
		return "", Session{}, err
	}
	return token, s, nil
}

// lookupOwner reads an owner's account: known is false when no account
// with a password has that owner. It checks no password.
func (a *Accounts) lookupOwner(ctx context.Context, owner string) (r accountRecord, known bool, err error) {
	id, err := a.store.Get(ctx, ownerDoc(owner))
	if errors.Is(err, ErrNotFound) {
		return accountRecord{}, false, nil
	}
	if err != nil {
		return accountRecord{}, false, err
	}
	r, err = a.getAccount(ctx, string(id))
	if errors.Is(err, ErrNotFound) {
		return accountRecord{}, false, nil
	}
	if err != nil {
		return accountRecord{}, false, err
	}
	if r.Password == "" || !strings.EqualFold(r.Owner, owner) {
		return accountRecord{}, false, nil
	}
	return r, true, nil
}

// SessionTTL is how long a console session lasts.
const SessionTTL = 12 * time.Hour

// sessionDoc is the document of a session: the token itself is stored
// nowhere.
func (a *Accounts) sessionDoc(token string) string {
	return docSession + hex.EncodeToString(a.mac(domainSession, token))
}

// Session returns the session of a token, or ErrNotFound once it has
// ended (by the clock of Config.Now, or Logout).
func (a *Accounts) Session(ctx context.Context, token string) (Session, error) {
	if token == "" || len(token) > 1024 {
		return Session{}, fmt.Errorf("account: session: %w", ErrNotFound)
	}
	var s Session
	err := getJSON(ctx, a.store, a.sessionDoc(token), &s)
	if errors.Is(err, ErrNotFound) {
		return Session{}, fmt.Errorf("account: session: %w", ErrNotFound)
	}
	if err != nil {
		return Session{}, err
	}
	if !a.now().Before(s.Expires) {
		return Session{}, fmt.Errorf("account: session ended at %s: %w", s.Expires.UTC().Format(time.RFC3339), ErrNotFound)
	}
	return s, nil
}

// Logout ends a session; ending one that has ended is no error.
func (a *Accounts) Logout(ctx context.Context, token string) error {
	return a.store.Update(ctx, a.sessionDoc(token), 0, func([]byte) ([]byte, error) { return nil, nil })
}

// Ledger returns the store as a ratelimit.Ledger, so that a
// ratelimit.Memory keeps its monthly counters (spend, quotas) in it and
// they survive restarts. A month's counters are one document, changed by
// one Update per Add (counters back at 0 are dropped from it). It is safe
// for concurrent use.
func Ledger(s Store) ratelimit.Ledger { return ledger{s} }

// ledger is Ledger's ratelimit.Ledger.
type ledger struct{ s Store }

// Load returns the counters of a month; absent ones are 0.
func (l ledger) Load(ctx context.Context, month string) (map[string]int64, error) {
	counters := make(map[string]int64)
	err := getJSON(ctx, l.s, docLedger+month, &counters)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return counters, nil
}

// Add adds deltas to the counters of a month in one Update.
func (l ledger) Add(ctx context.Context, month string, deltas map[string]int64) error {
	if month == "" {
		return fmt.Errorf("%w: ledger month is empty", ErrInvalid)
	}
	if len(deltas) == 0 {
		return nil
	}
	return l.s.Update(ctx, docLedger+month, 0, func(old []byte) ([]byte, error) {
		counters := make(map[string]int64)
		if old != nil {
			if err := json.Unmarshal(old, &counters); err != nil {
				return nil, fmt.Errorf("account: document %q: %w", docLedger+month, err)
			}
		}
		for name, d := range deltas {
			// A counter back at 0 (a hold released) is dropped: Load
			// reads absent ones as 0, and the month stays small.
			if counters[name] += d; counters[name] == 0 {
				delete(counters, name)
			}
		}
		return json.Marshal(counters)
	})
}

// Tiers returns the ladder of Config.Tiers (policy.Tiers() when it was
// zero), new at each call, so that a caller such as an admin API checks
// names against the ladder SetTier uses.
func (a *Accounts) Tiers() ratelimit.Ladder { return cloneLadder(a.rules.tiers) }

// Plans returns the plans of Config.Plans (policy.Plans() when it was
// nil), new at each call.
func (a *Accounts) Plans() ratelimit.Plans {
	ps := slices.Clone(a.rules.plans)
	for i := range ps {
		ps[i].Features = slices.Clone(ps[i].Features)
	}
	return ps
}

// cloneLadder returns a copy of l that shares nothing with it.
func cloneLadder(l ratelimit.Ladder) ratelimit.Ladder {
	l.Tiers, l.Pinned = slices.Clone(l.Tiers), slices.Clone(l.Pinned)
	if l.Aliases != nil {
		l.Aliases = maps.Clone(l.Aliases)
	}
	return l
}
