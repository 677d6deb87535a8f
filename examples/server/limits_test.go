package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestRedisErrorsHidePassword: a -redis URL that fails, to parse or to
// connect, is reported without its password.
func TestRedisErrorsHidePassword(t *testing.T) {
	const secret = "s3cret-pass"
	for _, tc := range []struct{ name, addr, want string }{
		{"unreachable", "redis://:" + secret + "@127.0.0.1:1/0", "redis://:xxxxx@127.0.0.1:1/0"},
		{"user and password", "redis://ops:" + secret + "@127.0.0.1:1", "redis://ops:xxxxx@127.0.0.1:1"},
		{"bad port", "redis://:" + secret + "@127.0.0.1:port/0", "redis://xxxxx@127.0.0.1:port/0"},
		{"bad database", "redis://:" + secret + "@127.0.0.1:1/db", "redis://:xxxxx@127.0.0.1:1/db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openBackends(context.Background(), options{redis: tc.addr}, slog.New(slog.DiscardHandler))
			if err == nil {
				t.Fatal("openBackends succeeded")
			}
			if msg := err.Error(); strings.Contains(msg, secret) || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q: want %q in it, and no password", msg, tc.want)
			}
		})
	}
}

func TestRedactAddr(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:6379":         "127.0.0.1:6379",
		"redis://127.0.0.1:6379": "redis://127.0.0.1:6379",
		"rediss://u:p@h:6380/2":  "rediss://u:xxxxx@h:6380/2",
		"unix:///run/redis.sock": "unix:///run/redis.sock",
		"redis://u:p%zz@h:6379":  "redis://xxxxx@h:6379",
		"redis://:a@b@h:6379":    "redis://:xxxxx@h:6379",
	} {
		if got := redactAddr(addr); got != want {
			t.Errorf("redactAddr(%q) = %q, want %q", addr, got, want)
		}
	}
}
