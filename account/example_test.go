package account_test

import (
	"context"
	"fmt"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/ratelimit"
)

func Example() {
	ctx := context.Background()
	accounts, err := account.New(ctx, account.Config{Store: account.NewMemory()})
	if err != nil {
		panic(err)
	}
	acct, err := accounts.CreateAccount(ctx, account.NewAccount{Name: "Acme"})
	if err != nil {
		panic(err)
	}
	key, secret, err := accounts.CreateKey(ctx, acct.ID, "backend")
	if err != nil {
		panic(err)
	}
	// The secret goes to the key's creator, once; requests carry it.
	p, err := accounts.Authenticate(ctx, secret)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Key.ID == key.ID, p.Account.Name, p.Account.Tier().Name)

	// A purchase of 40 USD unlocks tier2 for every key of the account; a
	// payment system's retry of it counts once.
	for range 2 {
		acct, err = accounts.AddCredits(ctx, account.Purchase{ID: "pay_123", Account: acct.ID, Amount: 40 * ratelimit.Dollar})
		if err != nil {
			panic(err)
		}
	}
	fmt.Println(acct.Credits, acct.Tier().Name)

	if err := accounts.RevokeKey(ctx, acct.ID, key.ID); err != nil {
		panic(err)
	}
	_, err = accounts.Authenticate(ctx, secret)
	fmt.Println(err)
	// Output:
	// true Acme default
	// 40 tier2
	// account: invalid API key
}
