package formats

import (
	"crypto/rand"
	"time"
)

// Options supplies the ids and the clock of built responses and streams.
// The zero value uses random ids from crypto/rand and time.Now; tests set
// both to get byte-identical output.
type Options struct {
	// NewID returns a fresh, unique id that begins with prefix, one of
	// "chatcmpl-", "msg_", "resp_", "rs_" and "fc_".
	NewID func(prefix string) string
	// Now returns the current time.
	Now func() time.Time
}

// ID returns a fresh id that begins with prefix, by NewID or else
// random.
func (o Options) ID(prefix string) string {
	if o.NewID != nil {
		return o.NewID(prefix)
	}
	return prefix + rand.Text()
}

// Time returns the current time, by Now or else time.Now.
func (o Options) Time() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}
