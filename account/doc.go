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
// Authenticate reads the store on every call: a revoked key is refused at
// once by every replica that shares the store.
//
// # Tiers and credits
//
// AddCredits records a purchase (idempotently, by its id, as payment
// systems retry) and adds it to the account's cumulative credits; the
// account's tier is the highest of ratelimit's tiers whose Credits the
// purchases reach, at once, for every key. The operator may pin a tier
// instead (SetTier), such as ratelimit.Unlimited for local apps.
//
// # Plans
//
// An account is on the Free code-review plan until it subscribes to a
// paid plan or starts its trial. Team and Growth have 14-day trials, one
// per plan per account; a trial that ends without a subscription expires
// and the account is back on Free. Account.PlanAt says where an account
// stands at a time, so that tests run on a fake clock.
//
// # Storage
//
// Everything lives in a Store of small documents: NewMemory for tests and
// single runs, OpenBolt for a durable file (the default of a server), and
// package account/redisaccount for several replicas. Package
// account/accounttest is the suite every Store passes.
package account
