// Package rediserr tells which errors of the Redis client mean that the
// server cannot serve now, for the stores that keep state in Redis
// (accounts, rate limits, stored responses): each wraps such an error
// with its own package's ErrUnavailable, which the HTTP layer answers
// with 503 and Retry-After.
package rediserr

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Unavailable reports whether err says the server could not be reached or
// cannot serve now: a refused or reset connection, a timeout, a closed
// pool, a server still loading its data or without its master. Replies
// such as WRONGTYPE, redis.Nil, a failed transaction and a ctx that ended
// are not.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, redis.TxFailedErr) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		switch code, _, _ := strings.Cut(reply.Error(), " "); code {
		case "LOADING", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "BUSY":
		default:
			return false
		}
	}
	return true
}

// Wrap returns err wrapped with sentinel when Unavailable(err), else err.
func Wrap(err, sentinel error) error {
	if !Unavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", sentinel, err)
}
