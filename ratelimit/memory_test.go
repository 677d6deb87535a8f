package ratelimit_test

import (
	"testing"

	"github.com/inferkit/inferkit/ratelimit"
	"github.com/inferkit/inferkit/ratelimit/ratelimittest"
)

func TestMemory(t *testing.T) {
	ratelimittest.Run(t, func(t *testing.T) ratelimit.Limiter { return ratelimit.NewMemory() })
}
