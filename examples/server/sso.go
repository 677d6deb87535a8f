package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/console"
	"github.com/inferkit/inferkit/ratelimit"
)

// ssoEntry is a provider of -sso's file. The client's secret is in the
// environment, under the name ClientSecretEnv, never in the file.
type ssoEntry struct {
	Name            string   `json:"name"`
	Issuer          string   `json:"issuer"`
	ClientID        string   `json:"client_id"`
	ClientSecretEnv string   `json:"client_secret_env"`
	RedirectURL     string   `json:"redirect_url"`
	Account         string   `json:"account"`
	Domains         []string `json:"domains"`
}

// readSSO reads -sso's file: the console's single sign-on providers,
// which console.New checks field by field.
func readSSO(path string, getenv func(string) string) ([]console.SSOProvider, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("inferkit-server: -sso: %w", err)
	}
	var entries []ssoEntry
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf("inferkit-server: -sso %s: %w", path, err)
	}
	var out []console.SSOProvider
	for i, e := range entries {
		secret := ""
		if e.ClientSecretEnv != "" {
			if secret = getenv(e.ClientSecretEnv); secret == "" {
				return nil, fmt.Errorf("inferkit-server: -sso %s: provider %d (%s): the variable %s that holds its client secret is not set", path, i, e.Name, e.ClientSecretEnv)
			}
		}
		out = append(out, console.SSOProvider{Name: e.Name, Issuer: e.Issuer, ClientID: e.ClientID, ClientSecret: secret,
			RedirectURL: e.RedirectURL, Account: e.Account, Domains: e.Domains})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("inferkit-server: -sso %s: no provider", path)
	}
	return out, nil
}

// chargePlansEvery is how often the server charges the plans' monthly
// fees that no use has charged yet.
const chargePlansEvery = time.Hour

// chargePlans charges the accounts' plan fees of the month at start and
// every chargePlansEvery until ctx ends: a month in which an account
// reviews nothing is charged too.
func chargePlans(ctx context.Context, accts *account.Accounts, quotas ratelimit.Quotas, logger *slog.Logger) {
	t := time.NewTicker(chargePlansEvery)
	defer t.Stop()
	for {
		if err := accts.ChargePlans(ctx, quotas, time.Now()); err != nil && ctx.Err() == nil {
			logger.Warn("inferkit-server: charging the plans' monthly fees", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
