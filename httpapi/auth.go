package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/ratelimit"
)

// ErrInvalidKey is what a KeyStore returns for a key it does not hold.
var ErrInvalidKey = errors.New("httpapi: invalid API key")

// KeyStore checks API keys. Implementations must be safe for concurrent
// use, keep keys hashed rather than in clear, compare in constant time,
// and never log a key.
type KeyStore interface {
	// Authenticate returns the identity of key. It returns an error that
	// wraps ErrInvalidKey for a key it does not hold (401); any other
	// error means the store could not answer (500).
	Authenticate(ctx context.Context, key string) (Identity, error)
}

// Identity is who a request's API key belongs to: what rate limits count
// by and what scopes stored responses. It never holds the key.
type Identity struct {
	// KeyID names the key, such as "key_1a2b3c4d5e6f7a8b"; it is logged
	// and keys per-key state. Never empty for an authenticated request.
	KeyID string
	// Account is the id of the account that owns the key, whose monthly
	// spend the request counts in; "" means the key is its own account.
	Account string
	// Tier is the key's rate-limit tier, which Config.Limiter applies.
	// The zero Tier means policy.Default; a Tier with a Name and no
	// limits limits nothing.
	Tier ratelimit.Tier
	// EndUser is the end user a request names (the user of chat,
	// responses, legacy completions and embeddings, responses'
	// safety_identifier, messages' metadata.user_id),
	// set once the request is parsed, which the access log records for
	// abuse tracking; "" when it names none. Keys never set it.
	EndUser string
}

// identityKey is the context key of a request's Identity.
type identityKey struct{}

// identitySlotKey is the context key of the access log's *Identity, which
// authentication fills so that the log line names the key.
type identitySlotKey struct{}

// IdentityFrom returns the identity of an authenticated request's key,
// from the request's context (r.Context()). It reports false outside a
// Handler's routes.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// Authenticate returns the stage that refuses requests without a key
// that keys holds, and puts the key's Identity into the context of the
// others (IdentityFrom), and into the access log's line (AccessLog). The
// key comes from "Authorization: Bearer <key>", or from the "x-api-key"
// header that the Anthropic SDKs send by default. A key that refuse
// reports true for (nil: none) is refused whatever keys holds, such as
// the admin API's key. A refusal is a 401 in the route's style, logged
// on log (nil: slog.Default()) without the key; it does not read the
// body: the 401 goes out at once, and the connection closes after it
// (see SkipBody). A key store that cannot answer is a 500 (Fail).
func Authenticate(keys KeyStore, log *slog.Logger, refuse func(key string) bool) func(http.Handler) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := bearer(r)
			if key == "" || refuse != nil && refuse(key) {
				msg := "httpapi: missing API key"
				if key != "" {
					msg = "httpapi: the admin key is no API key"
				}
				log.LogAttrs(r.Context(), slog.LevelInfo, msg, slog.String("path", r.URL.Path))
				SkipBody(w, r)
				WriteError(w, r, formats.Unauthorized())
				return
			}
			id, err := keys.Authenticate(r.Context(), key)
			switch {
			case errors.Is(err, ErrInvalidKey):
				log.LogAttrs(r.Context(), slog.LevelInfo, "httpapi: invalid API key", slog.String("path", r.URL.Path))
				SkipBody(w, r)
				WriteError(w, r, formats.Unauthorized())
				return
			case err != nil:
				Fail(w, r, log, err)
				return
			case id.KeyID == "":
				Fail(w, r, log, errors.New("httpapi: the key store returned an identity without a KeyID"))
				return
			}
			if slot, ok := r.Context().Value(identitySlotKey{}).(*Identity); ok {
				*slot = id
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, id)))
		})
	}
}

// bearer returns the request's API key, or "": a Bearer Authorization,
// else X-Api-Key (which the Anthropic SDKs send).
func bearer(r *http.Request) string {
	if scheme, key, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(key)
	}
	return strings.TrimSpace(r.Header.Get("X-Api-Key"))
}

// StaticKeys is a KeyStore of a fixed set of keys, kept as
// HMAC-SHA-256 digests under a secret: one made at random for the store
// by NewStaticKeys and NewTieredKeys, or the caller's, given to
// NewSharedKeys. A key's KeyID is "key_" and the first 8 bytes of its
// digest in hex, which helps nobody guess the key, even a short one,
// without the secret. Under a random secret the id is the same for every
// request to one store, so that per-key state (rate limits, stored
// responses) follows the key within the process, and another in another
// process or after a restart; where ids must last (responses stored in a
// file, limits shared through Redis by replicas), give every store the
// same secret with NewSharedKeys, or authenticate through package
// account instead (Config.Accounts), whose operator secret is kept with
// the accounts. A StaticKeys is safe for concurrent use; it has nothing
// to close.
type StaticKeys struct {
	secret []byte
	sums   [][]byte // account.KeyDigest of each key
	tiers  []ratelimit.Tier
}

// APIKey is a key and its rate-limit tier, for NewTieredKeys.
type APIKey struct {
	// Key is the secret the client sends.
	Key string
	// Tier is the key's tier; the zero Tier means policy.Default.
	Tier ratelimit.Tier
}

// NewStaticKeys returns a store of keys, all on the default tier. It
// fails on an empty key or on none at all.
func NewStaticKeys(keys ...string) (*StaticKeys, error) {
	tiered := make([]APIKey, len(keys))
	for i, k := range keys {
		tiered[i] = APIKey{Key: k}
	}
	return NewTieredKeys(tiered...)
}

// NewTieredKeys returns a store of keys, each on its own tier: its
// identities carry the tier. It fails on an empty key or on none at all.
func NewTieredKeys(keys ...APIKey) (*StaticKeys, error) {
	secret := make([]byte, minKeySecret)
	rand.Read(secret) // never fails (crypto/rand)
	return NewSharedKeys(secret, keys...)
}

// minKeySecret is the shortest secret of NewSharedKeys.
const minKeySecret = 32

// NewSharedKeys returns a store of keys, each on its own tier, whose
// KeyIDs derive from secret (32 bytes or more, random, kept as secret as
// the keys): every store given the same secret and key gives it the same
// id, in replicas that share limits and after restarts. It fails on a
// shorter secret, on an empty key or on none at all.
func NewSharedKeys(secret []byte, keys ...APIKey) (*StaticKeys, error) {
	if len(secret) < minKeySecret {
		return nil, fmt.Errorf("httpapi: the secret of the keys' ids has %d bytes, want %d at least", len(secret), minKeySecret)
	}
	if len(keys) == 0 {
		return nil, errors.New("httpapi: no API keys")
	}
	s := &StaticKeys{secret: bytes.Clone(secret)}
	for _, k := range keys {
		// Presented keys are trimmed (bearer), so configured ones are
		// too: a key read from a file with its newline still matches.
		key := strings.TrimSpace(k.Key)
		if key == "" {
			return nil, errors.New("httpapi: an API key is empty")
		}
		sum, _ := account.KeyDigest(s.secret, key)
		s.sums = append(s.sums, sum)
		s.tiers = append(s.tiers, k.Tier)
	}
	return s, nil
}

// Authenticate returns the identity of key, or ErrInvalidKey. It compares
// the key's digest with every stored digest in constant time.
func (s *StaticKeys) Authenticate(_ context.Context, key string) (Identity, error) {
	sum, id := account.KeyDigest(s.secret, key)
	match := -1
	for i := range s.sums {
		if subtle.ConstantTimeCompare(sum, s.sums[i]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return Identity{}, ErrInvalidKey
	}
	return Identity{KeyID: id, Tier: s.tiers[match]}, nil
}

// accountKeys is the KeyStore of Config.Accounts: a key's identity is its
// account's, at the account's tier as stored now.
type accountKeys struct{ accounts *account.Accounts }

// Authenticate implements KeyStore.
func (k accountKeys) Authenticate(ctx context.Context, key string) (Identity, error) {
	p, err := k.accounts.Authenticate(ctx, key)
	switch {
	case errors.Is(err, account.ErrInvalidKey):
		return Identity{}, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	case err != nil:
		return Identity{}, fmt.Errorf("httpapi: authenticating through the accounts: %w", err)
	}
	return Identity{KeyID: p.Key.ID, Account: p.Account.ID, Tier: p.Account.Tier()}, nil
}
