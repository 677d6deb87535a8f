package ratelimit

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// Ledger keeps a Memory's monthly counters durably (see NewDurableMemory):
// an account store implements it so that spend, usage and quotas survive
// a restart. Implementations must be safe for concurrent use.
//
// A month's counters are named integers. The names are Memory's to
// choose and the Ledger's to keep as they are: "kind/account" for an
// account's counters, such as "spend/acct_1" or "input_tokens/acct_1",
// and "user/account/user" for a user counted among an account's quota
// users, with the account and the user escaped by url.PathEscape.
type Ledger interface {
	// Load returns the counters of a month, such as "2026-11", by name;
	// absent ones are 0.
	Load(ctx context.Context, month string) (map[string]int64, error)
	// Add adds deltas to counters of a month, atomically (all or
	// none) and durably, before it returns.
	Add(ctx context.Context, month string, deltas map[string]int64) error
}

// The kinds of a month's counters: an account's spend and what holds it,
// its settled usage, its quotas, and its quota users.
const (
	counterSpend     = "spend"
	counterHeld      = "held"
	counterRequests  = "requests"
	counterInput     = "input_tokens"
	counterCached    = "cached_input_tokens"
	counterOutput    = "output_tokens"
	counterReviews   = "reviews"
	counterSummaries = "summaries"
	counterUser      = "user"
	counterPlanFee   = "plan_fee"
)

// counter is one of an account's counters in a month; user is set for
// counterUser only.
type counter struct{ kind, account, user string }

// name is the counter's name in a Ledger.
func (c counter) name() string {
	n := c.kind + "/" + url.PathEscape(c.account)
	if c.kind == counterUser {
		n += "/" + url.PathEscape(c.user)
	}
	return n
}

// parseCounter reads a counter's name.
func parseCounter(name string) (counter, error) {
	parts := strings.Split(name, "/")
	var c counter
	var err error
	switch {
	case len(parts) == 2 && parts[0] != counterUser:
		c.kind = parts[0]
		c.account, err = url.PathUnescape(parts[1])
	case len(parts) == 3 && parts[0] == counterUser:
		c.kind = parts[0]
		if c.account, err = url.PathUnescape(parts[1]); err == nil {
			c.user, err = url.PathUnescape(parts[2])
		}
	default:
		return counter{}, fmt.Errorf("ratelimit: ledger counter %q is not one of Memory's", name)
	}
	switch c.kind {
	case counterSpend, counterHeld, counterRequests, counterInput, counterCached, counterOutput,
		counterReviews, counterSummaries, counterUser, counterPlanFee:
	default:
		return counter{}, fmt.Errorf("ratelimit: ledger counter %q is not one of Memory's", name)
	}
	if err != nil || c.account == "" {
		return counter{}, fmt.Errorf("ratelimit: ledger counter %q is malformed", name)
	}
	return c, nil
}
