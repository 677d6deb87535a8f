package rediserr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/redis/go-redis/v9"
)

// reply is an error reply of the server.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

func TestUnavailable(t *testing.T) {
	sentinel := errors.New("store: unavailable")
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{redis.Nil, false},
		{redis.TxFailedErr, false},
		{context.Canceled, false},
		{fmt.Errorf("get: %w", context.DeadlineExceeded), false},
		{reply("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{reply("LOADING Redis is loading the dataset in memory"), true},
		{reply("MASTERDOWN Link with MASTER is down"), true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, true},
		{redis.ErrClosed, true},
	} {
		if got := Unavailable(c.err); got != c.want {
			t.Errorf("Unavailable(%v) = %v, want %v", c.err, got, c.want)
		}
		if got := Wrap(c.err, sentinel); errors.Is(got, sentinel) != c.want || !errors.Is(got, c.err) && c.err != nil {
			t.Errorf("Wrap(%v) = %v", c.err, got)
		}
	}
}
