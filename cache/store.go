package cache

import (
	"context"
	"errors"
	"time"
)

// DefaultTTL is how long a record is kept when a store's configured TTL
// is 0: one day.
const DefaultTTL = 24 * time.Hour

// DefaultOwnerShare sets the per-owner bounds of a store whose config
// leaves them 0: each owner may hold 1/DefaultOwnerShare of the store's
// entries and of its bytes. With an eighth, eight keys writing at full
// speed fill the store without evicting one another's records, and one
// owner's byte bound (8 MiB for the default MemoryStore) still holds a
// record of a request at httpapi's default 4 MiB body cap. A server with
// a single key (or none: every record is then the empty owner's) should
// set the per-owner bounds equal to the global ones.
const DefaultOwnerShare = 8

// ErrNotFound is returned, possibly wrapped, for a record a store does not
// hold: never stored, expired, evicted, deleted, or stored by another
// owner. Test for it with errors.Is.
var ErrNotFound = errors.New("cache: record not found")

// ErrUnavailable is returned, wrapped with the client's error, when a
// shared store cannot be reached (Redis down or restarting): try again
// shortly. Test for it with errors.Is.
var ErrUnavailable = errors.New("cache: the store is unavailable")

// ErrTooLarge is returned, wrapped, by Put for a record larger than the
// store's byte bound on its own.
var ErrTooLarge = errors.New("cache: record too large")

// Record is one stored response. The store treats Response and Transcript
// as opaque bytes; their encoding belongs to the caller.
type Record struct {
	// Owner is who may read, replace and delete the record: the id of
	// the API key that made it. It may be empty.
	Owner string
	// ID is the response's id, unique per owner. Required.
	ID string
	// Response is the encoded response object.
	Response []byte
	// Transcript is the encoded conversation that a later request
	// continues.
	Transcript []byte
	// Expires is when the record stops being returned. It is set by the
	// store: Put ignores the caller's value and stamps its own clock
	// plus its TTL; Get returns it.
	Expires time.Time
}

// Size is what r counts against a store's byte bound: the lengths of its
// owner, id, response and transcript.
func (r Record) Size() int64 {
	return int64(len(r.Owner) + len(r.ID) + len(r.Response) + len(r.Transcript))
}

// Store keeps records for a bounded time. The interface lives here rather
// than with its consumer (package httpapi) because several packages
// implement it (this one, a Redis store elsewhere) and several consume it
// (httpapi, tests, a user's own server), and all of them must agree on
// its contract, which package cachetest checks.
//
// Every call names the owner: a store must never return, replace or
// delete a record of another owner than the one given. Records are
// copied in and out: neither the slices given to Put nor those returned
// by Get are shared with the store. Implementations must be safe for
// concurrent use.
type Store interface {
	// Get returns the record id of owner, or an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, owner, id string) (Record, error)
	// Put stores r under r.Owner and r.ID, replacing any record of that
	// key, to expire after the store's TTL. Older records may be evicted
	// to make room, per owner: past the store's per-owner bounds (of
	// entries, of bytes), Put evicts r.Owner's own oldest records and no
	// one else's; past its global bounds, it evicts the oldest record of
	// the owner holding the most (entries or bytes, whichever bound is
	// reached), and r.Owner's own when r.Owner would hold as much. So no
	// owner ever holds more than its bounds; while the owners' bounds
	// add up to no more than the global ones, an owner's writes never
	// evict another's records; and past that, a Put evicts another
	// owner's record only when that owner holds more than r.Owner would.
	Put(ctx context.Context, r Record) error
	// Delete removes the record id of owner, or returns an error
	// wrapping ErrNotFound.
	Delete(ctx context.Context, owner, id string) error
}
