// Package admin serves the admin API: JSON routes under /v1/admin for the
// operator, or the operator's billing system, to manage the accounts of
// package account (accounts, keys, credits, plans) that an
// httpapi.Handler authenticates through (httpapi.Config.Accounts).
//
// An [API] registers its routes on a caller's [*http.ServeMux]
// ([API.Register]), or stands in front of an httpapi.Handler
// ([API.Mount]), as examples/server mounts it beside the console. Its
// routes, the list that the package's tests check against its route
// table:
//
//	POST   /v1/admin/accounts            {"name", "owner"?, "password"?, "id"?} → 201 account
//	GET    /v1/admin/accounts            → list of accounts
//	GET    /v1/admin/accounts/{id}       → account
//	POST   /v1/admin/accounts/{id}/tier  {"tier": "default"|"tier2"|"tier3"|"unlimited"|""} → account
//	POST   /v1/admin/accounts/{id}/plan  {"plan", "trial"?} → account
//	POST   /v1/admin/api-keys            {"name", "account"?} → 201 api_key, its secret in "key"
//	GET    /v1/admin/api-keys?account=ID → list of api_key, without secrets
//	DELETE /v1/admin/api-keys/{id}       → {"object": "api_key.deleted", "id", "deleted": true}
//	POST   /v1/admin/credits             {"id", "account"?, "amount_usd"} → account
//	GET    /v1/admin/usage?account=ID    → usage
//
// A new route is one row of the route table (api.go), its handler
// (admin.go) and its line above.
//
// Every route takes "Authorization: Bearer <admin key>" ([Config.Key]),
// compared in constant time; an API key, a console cookie or no key is a
// 401 in OpenAI's error shape, as every other error is: a 400 names the
// offending field in param, an unknown account or key is a 404, an id or
// owner taken, a trial used or a trial over a paid plan a 409, and
// revoking a key of the server's configuration (account.Config.StaticKeys)
// a 409. The routes are not rate-limited and no API key's middleware
// wraps them; they pass through the stages of package httpapi (the access
// log, the body's read deadline, the body limit). Bodies are JSON objects
// whose unknown fields are refused. An account omitted where it is
// optional is account.DefaultAccount, which owns the keys of a server's
// configuration. The admin key is no API key: give [API.IsKey] to
// httpapi.Config.RefuseKey.
//
// A tier of "" unpins it: the account's tier follows its credits again. A
// plan with "trial": true starts the plan's 14-day trial (team, growth;
// once per plan and account), else subscribes to it (free, team, growth,
// enterprise). A purchase's "id" is its payment's: a purchase sent twice
// counts once. Money is a decimal string of US dollars, such as "40" or
// "12.5" (ratelimit.Money, exact to the nano-dollar); amount_usd also
// takes a JSON number, read from its decimal text, never through a
// float, and is more than 0. Times are Unix seconds, null when absent.
//
// An account is {"object": "account", "id", "name", "owner" (null without
// a console login), "created_at", "credits_usd" (the sum of its
// purchases), "billing" ("postpaid" or "prepaid", account.Billing),
// "balance_usd" (under prepaid billing, what is left of the credits:
// account.Account.Balance; null under postpaid), "tier" (in force; null
// under prepaid billing before a purchase unlocks one), "pinned_tier" (null when the tier
// follows the credits), "plan": {"name", "state" (active, trialing or
// expired), "trial_ends_at", "price_usd", "features"}}, its plan as at
// the API's clock.
//
// An api_key is {"object": "api_key", "id", "name", "hint" (its start and
// end, to recognise it), "account", "created_at", "last_used_at" (to the
// minute), "static" (true for a key of the server's configuration, which
// has no creation time)}, and "key", the secret, in the answer that
// creates it only.
//
// A usage is {"object": "usage", "account", "month" (such as "2026-11",
// UTC), "spend_usd" (what the month's spend cap counts, reservations in
// flight included), "held_usd" (the part of it that unsettled
// reservations hold), "plan_fee_usd" (the part of it that is the
// code-review plan's monthly price), "max_monthly_spend_usd" (the tier's cap; null
// without one), "requests", "input_tokens", "cached_input_tokens",
// "output_tokens" (of the settled requests), "tier", "credits_usd",
// "billing", "balance_usd", "held_balance_usd" (the part of the credits
// that requests in flight hold; null, as balance_usd, under postpaid
// billing), "plan"}, as [Config.Usage] counts them (ratelimit.Limiter.Usage); an
// API without one meters nothing and answers 501.
package admin
