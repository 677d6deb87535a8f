package console_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/console"
)

// A console on the mux that also serves the API (an httpapi.Handler
// registers its /v1 routes beside it). Serve it over HTTPS: its cookies
// are Secure unless Config.InsecureCookies.
func Example() {
	ctx := context.Background()
	accounts, err := account.New(ctx, account.Config{Store: account.NewMemory()})
	if err != nil {
		log.Fatal(err)
	}
	c, err := console.New(console.Config{Accounts: accounts})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	c.Register(mux)

	for _, path := range []string{"/", "/api-keys"} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "https://console.example"+path, nil))
		fmt.Println(path, w.Code, w.Header().Get("Location"))
	}
	// Output:
	// / 303 /api-keys
	// /api-keys 303 /login
}
