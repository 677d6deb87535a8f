// Package cache keeps stored responses: what a server needs to answer
// GET and DELETE /v1/responses/{id} and to continue a conversation from
// previous_response_id.
//
// A [Store] holds [Record]s keyed by owner (the API key that made the
// response) and id; every call names the owner, so one key never sees
// another's records. Records are opaque bytes: package httpapi encodes its
// wire objects into them, so this package knows no wire format and
// depends on nothing of the rest of the module.
//
// Two stores are included:
//
//   - [MemoryStore] keeps records in memory, bounded by a TTL, a number
//     of entries and a size; its contents are lost with the process.
//   - [BoltStore] keeps them in a file through go.etcd.io/bbolt, with the
//     same bounds, so that they survive a restart. Every Put is synced to
//     disk before it returns: a crash loses at most the write in flight.
//
// The bounds hold per owner as well as in all, so that one key cannot
// evict the others' records: past its own bounds (an eighth of the
// store's by default, [DefaultOwnerShare]) a key's Put evicts that key's
// oldest records, and past the store's it evicts those of the key
// holding the most; see [Store].
//
// Other implementations satisfy the same interface and check themselves
// with the conformance suite of package
// [github.com/inferkit/inferkit/cache/cachetest]; package
// [github.com/inferkit/inferkit/cache/rediscache] is one, shared by the
// replicas of a server.
//
// The package is pure Go: it builds and tests with CGO_ENABLED=0.
package cache
