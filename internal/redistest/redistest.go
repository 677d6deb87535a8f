// Package redistest starts a private redis-server for a test: the Redis
// implementations' suites run against a real server, or skip with a clear
// message where none can be started.
package redistest

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Start starts redis-server on a Unix socket in a temporary folder,
// persisting nothing, and returns the socket's path. The server stops
// when the test ends. The test is skipped, saying why, when redis-server
// is not installed (`make test` installs the Debian package) or does not
// start.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redistest: redis-server is not installed (apt-get install redis-server, or run `make test`, which installs it): skipping the Redis tests")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Skipf("redistest: cannot start redis-server: %v: skipping the Redis tests", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return sock
		}
		select {
		case <-exited:
			t.Skipf("redistest: redis-server exited at start-up: %s: skipping the Redis tests", strings.TrimSpace(out.String()))
		default:
		}
		if time.Now().After(deadline) {
			t.Skipf("redistest: redis-server did not answer within 10s (%v): skipping the Redis tests", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Client returns a new client of the server at sock (from Start), closed
// when the test ends. Several clients of one server stand for several
// replicas.
func Client(t testing.TB, sock string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 32})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}
