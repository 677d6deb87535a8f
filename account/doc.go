// Package account keeps the accounts of an inference service: each owns
// API keys, a credit balance and its purchases, a rate-limit tier and a
// code-review plan, and has an owner who signs in to the console.
//
// # Keys
//
// An API key's secret is shown once, when CreateKey makes it, and never
// stored: the store keeps HMAC-SHA-256(operator secret, key). A key's id
// ("key_" and 16 hex digits) derives from that HMAC too, so that logs and
// storage keys name a key without helping anyone guess it, and ids stay
// the same across restarts and replicas that share the operator secret.
// Authenticate reads the store on every call (the key's document, then
// its account's): a revoked key is refused at once by every replica that
// shares the store. A key's last use is written at most once a minute.
// Keys given to a server at start-up (Config.StaticKeys) are keys of
// DefaultAccount that live in its configuration only: listed, never
// stored nor revocable.
//
// The operator secret is Config.Secret, or else one made at random and
// kept in the store, so that replicas sharing a store share key ids.
//
// # Tiers and credits
//
// AddCredits records a purchase (idempotently, by its id, as payment
// systems retry) and adds it to the account's cumulative credits; the
// account's tier is the highest of Config.Tiers whose Credits the
// purchases reach, at once, for every key. The operator may pin a tier
// of the ladder instead (SetTier), such as policy.Unlimited for local
// apps.
//
// # Prepaid billing
//
// Config.Billing says how accounts pay. Under Postpaid (the default)
// credits only unlock tiers, and spend is counted per month under each
// tier's cap (package ratelimit). Under Prepaid, credits are money to
// spend: Accounts.Limiter wraps the server's ratelimit.Limiter so that
// each admitted request holds its maximum cost from its account's
// balance (Account.Balance: Credits less Drawn and Held) in one atomic
// Update of the account's document, before the engine decodes anything,
// and draws its real cost when it settles; a request the balance cannot
// pay for is refused (ratelimit.ErrNoCredit), so that replicas sharing a
// Store stop an account at exactly zero. A purchase raises the balance
// at once. An account has no tier (Account.Tier is the zero Tier) until
// its purchases reach the first tier's Credits, the spec's "each tier is
// unlocked by the credit purchase in its row", and is refused until
// then, unless the operator pins a tier.
//
// The ladder and the plans are data: Config.Tiers and Config.Plans, the
// hosted Inference API's of package policy when zero, so that an
// embedding program brings its own. An Account returned by Accounts
// carries them, so that its Tier and PlanAt read them; an Account made
// otherwise reads policy's.
//
// # Plans
//
// An account is on the base plan of Config.Plans (policy.Free) until it
// subscribes to a paid plan or starts its trial. A plan's Trial gives
// its length (policy's Team and Growth have 14-day trials), one per plan
// per account; a trial that ends without a subscription expires and the
// account is back on the base plan. Account.PlanAt says where an
// account stands at a time, so that tests run on a fake clock.
//
// # Console sessions
//
// An account's owner signs in with an e-mail address and a password, kept
// as a salted PBKDF2-SHA-256 hash; Login starts a session of SessionTTL
// whose random token is stored only as an HMAC, with a CSRF token for the
// console's forms. Sessions are for the console: API routes authenticate
// keys only.
//
// Password checks are costly on purpose, so Login bounds them without
// letting one client's attempts refuse another's: an owner's attempts
// are counted, per client (the console's client address) and in all,
// before their passwords are checked; MaxLoginFailures of them from one
// client without a success lock that client's logins of the owner for
// LoginWindow (ErrLoginLocked), and MaxOwnerLoginFailures from all
// clients lock the owner's, however many race. No more than
// Config.MaxConcurrentLogins checks run at once, handed round the
// waiting clients in turn, so a client's flood waits behind its own
// attempts; an attempt for an owner who does not exist waits its turn
// and as long as a hash takes, but hashes nothing.
//
// # Storage
//
// Everything lives in a Store of small documents: NewMemory for tests and
// single runs, OpenBolt for a durable file (the default of a server), and
// package account/redisaccount for several replicas. An account is one
// document holding its credits and purchases, so that a purchase and the
// credits it adds change in one atomic Update. Sessions and login counts
// expire: Redis drops them itself, and Memory and Bolt keep an index of
// expiries from which each Update removes a bounded batch of expired
// values, so that those of owners never seen again do not pile up. Ledger keeps a
// ratelimit.Memory's monthly counters in the same store. Package
// account/accounttest is the suite every Store passes.
package account
