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

func (o Options) id(prefix string) string {
	if o.NewID != nil {
		return o.NewID(prefix)
	}
	return prefix + rand.Text()
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}
