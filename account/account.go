package account

import (
	"context"
	"errors"
	"time"

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
	// ErrTrialUsed: the account already had the trial of that plan.
	ErrTrialUsed = errors.New("account: trial already used")
	// ErrInvalid: an argument is out of its range; the error wrapping it
	// names the argument.
	ErrInvalid = errors.New("account: invalid argument")
)

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
	// PinnedTier is the tier the operator set with SetTier, by name; ""
	// means the tier follows Credits.
	PinnedTier string `json:"pinned_tier,omitzero"`
	// Plan is the code-review subscription.
	Plan Subscription `json:"plan"`
}

// Tier returns the account's rate-limit tier: PinnedTier if set, else
// ratelimit.TierForCredits(Credits).
func (a Account) Tier() ratelimit.Tier {
	panic("TODO")
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

// PlanAt returns the plan in force at now and its state: a trial past
// TrialEnds is expired and its plan ratelimit.Free.
func (a Account) PlanAt(now time.Time) (ratelimit.Plan, PlanState) {
	panic("TODO")
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
	// never.
	LastUsed time.Time `json:"last_used,omitzero"`
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
	// Store share it.
	Secret []byte
	// StaticKeys are API keys of DefaultAccount that live only in this
	// process's configuration (a server's -api-key flags): they
	// authenticate like created keys but are not stored, listed or
	// revocable.
	StaticKeys []string
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// Accounts manages accounts, keys, credits, plans and console sessions
// on a Store. Create it with New. It is safe for concurrent use and has
// nothing to close (the caller closes its Store).
type Accounts struct {
	store  Store
	secret []byte
	static map[string]Key // by id
	now    func() time.Time
}

// New validates cfg, makes DefaultAccount if the store lacks it, and
// returns Accounts.
func New(ctx context.Context, cfg Config) (*Accounts, error) { panic("TODO") }

// KeyID returns the id a key's secret has under the operator secret.
func (a *Accounts) KeyID(secret string) string { panic("TODO") }

// CreateAccount makes an account; ErrExists if its id or owner is taken.
func (a *Accounts) CreateAccount(ctx context.Context, n NewAccount) (Account, error) { panic("TODO") }

// Account returns an account, or ErrNotFound.
func (a *Accounts) Account(ctx context.Context, id string) (Account, error) { panic("TODO") }

// List returns every account, by id.
func (a *Accounts) List(ctx context.Context) ([]Account, error) { panic("TODO") }

// SetTier pins an account's tier by name ("default", "tier2", "tier3",
// "unlimited"), or unpins it with "".
func (a *Accounts) SetTier(ctx context.Context, id, tier string) (Account, error) { panic("TODO") }

// CreateKey makes a key for an account and returns it with its secret,
// which is shown to its creator once and stored nowhere. name is 1 to 100
// characters.
func (a *Accounts) CreateKey(ctx context.Context, account, name string) (Key, string, error) {
	panic("TODO")
}

// Keys lists an account's keys (stored and static), by creation time.
func (a *Accounts) Keys(ctx context.Context, account string) ([]Key, error) { panic("TODO") }

// Key returns a key by id, or ErrNotFound.
func (a *Accounts) Key(ctx context.Context, id string) (Key, error) { panic("TODO") }

// RevokeKey deletes a key: it no longer authenticates, on any replica.
// account "" matches any account; a key of another account, or a static
// key, is ErrNotFound.
func (a *Accounts) RevokeKey(ctx context.Context, account, id string) error { panic("TODO") }

// Authenticate returns who secret belongs to, or ErrInvalidKey. It
// compares HMACs in constant time and records the key's use at most once
// a minute.
func (a *Accounts) Authenticate(ctx context.Context, secret string) (Principal, error) {
	panic("TODO")
}

// AddCredits records a purchase and returns the account after it; a
// purchase whose ID was recorded before changes nothing and returns the
// account as it is.
func (a *Accounts) AddCredits(ctx context.Context, p Purchase) (Account, error) { panic("TODO") }

// Purchases lists an account's purchases, oldest first.
func (a *Accounts) Purchases(ctx context.Context, account string) ([]Purchase, error) {
	panic("TODO")
}

// StartTrial starts the trial of a plan that has one (Team, Growth):
// ErrTrialUsed if the account had it before, ErrInvalid for a plan
// without a trial.
func (a *Accounts) StartTrial(ctx context.Context, account, plan string) (Account, error) {
	panic("TODO")
}

// Subscribe puts an account on a plan, paid (what a payment system calls
// when a subscription is bought or changed): active, no trial.
func (a *Accounts) Subscribe(ctx context.Context, account, plan string) (Account, error) {
	panic("TODO")
}

// Login checks an owner's password and starts a console session of
// SessionTTL; it returns the session's token, to keep in a cookie.
func (a *Accounts) Login(ctx context.Context, owner, password string) (string, Session, error) {
	panic("TODO")
}

// SessionTTL is how long a console session lasts.
const SessionTTL = 12 * time.Hour

// Session returns the session of a token, or ErrNotFound once it has
// ended.
func (a *Accounts) Session(ctx context.Context, token string) (Session, error) { panic("TODO") }

// Logout ends a session.
func (a *Accounts) Logout(ctx context.Context, token string) error { panic("TODO") }

// Ledger returns the store as a ratelimit.Ledger, so that a
// ratelimit.Memory keeps its monthly counters (spend, quotas) in it and
// they survive restarts.
func Ledger(s Store) ratelimit.Ledger { panic("TODO") }
