package console_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/console"
)

// TestSignInFlood floods the sign-in form with wrong passwords for random
// owners from 1, 4 and 16 attacking clients (addresses), four requests
// at a time each, while a real owner signs in from another address: every
// real sign-in must succeed. It counts outcomes, never times; the
// attackers' password checks are made costly (and one at a time) so that
// a throttle they could fill would show. go test -v prints the outcomes
// of both sides.
func TestSignInFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood of sign-ins")
	}
	const (
		realSignIns = 12
		perClient   = 4
	)
	// INFERKIT_FLOOD_ITERATIONS=600000 measures at the default hash cost.
	iterations := 50_000
	if v, err := strconv.Atoi(os.Getenv("INFERKIT_FLOOD_ITERATIONS")); err == nil && v > 0 {
		iterations = v
	}
	for _, clients := range []int{1, 4, 16} {
		t.Run(fmt.Sprintf("%d clients", clients), func(t *testing.T) {
			ctx := t.Context()
			accts, err := account.New(ctx, account.Config{Store: account.NewMemory(), PasswordIterations: iterations, MaxConcurrentLogins: 1})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := accts.CreateAccount(ctx, account.NewAccount{Name: "Ada", Owner: owner, Password: password}); err != nil {
				t.Fatal(err)
			}
			c, err := console.New(console.Config{Accounts: accts, Logger: slog.New(slog.DiscardHandler), InsecureCookies: true})
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			c.Register(mux)
			signIn := func(addr, who, pw string) int {
				form := url.Values{"owner": {who}, "password": {pw}, "csrf": {"flood-token"}}
				r := httptest.NewRequest("POST", "http://localhost/login", strings.NewReader(form.Encode()))
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				r.Header.Set("Origin", "http://localhost")
				r.Header.Set("Sec-Fetch-Site", "same-origin")
				r.AddCookie(&http.Cookie{Name: "console_login", Value: "flood-token"})
				r.RemoteAddr = addr
				w := httptest.NewRecorder()
				mux.ServeHTTP(w, r)
				return w.Code
			}

			var (
				stop     atomic.Bool
				wg       sync.WaitGroup
				mu       sync.Mutex
				attacks  = map[int]int{}
				attempts atomic.Int64
			)
			for i := range clients {
				addr := fmt.Sprintf("203.0.113.%d:%d", i+1, 40000+i)
				for j := range perClient {
					wg.Go(func() {
						for n := 0; !stop.Load(); n++ {
							code := signIn(addr, fmt.Sprintf("random-%d-%d-%d@example.com", i, j, n), "a wrong password")
							attempts.Add(1)
							mu.Lock()
							attacks[code]++
							mu.Unlock()
						}
					})
				}
			}
			// Let the flood start before the real owner comes.
			for attempts.Load() < int64(clients*perClient) {
				if code := signIn("198.51.100.7:5000", "warmup@example.com", "x"); code == 0 {
					t.Fatal("no answer")
				}
			}
			real := map[int]int{}
			for range realSignIns {
				real[signIn("192.0.2.10:51000", owner, password)]++
			}
			stop.Store(true)
			wg.Wait()
			t.Logf("%d attacking clients: real sign-ins %v (303 is success: %d%%); attackers' answers %v",
				clients, real, 100*real[http.StatusSeeOther]/realSignIns, attacks)
			if real[http.StatusSeeOther] != realSignIns {
				t.Errorf("%d attacking clients: %d of %d real sign-ins succeeded (%v)", clients, real[http.StatusSeeOther], realSignIns, real)
			}
		})
	}
}
