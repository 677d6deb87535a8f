// Package console serves the account owner's web console: server-rendered
// HTML pages, behind a login, where the owner of an account creates, lists
// and revokes API keys and sees the account's tier, credits, code-review
// plan and this month's usage and spend.
//
// A [Console] registers its routes on a caller's [*http.ServeMux]
// ([Console.Register]):
//
//	GET  /                        redirects to /api-keys
//	GET  /login, POST /login      the sign-in form
//	POST /logout                  ends the session
//	GET  /api-keys                keys, tier, credits, usage, plan
//	POST /api-keys                creates a key and shows its secret once
//	POST /api-keys/{id}/revoke    revokes a key
//	GET  /login/sso/{name}        single sign-on through a provider (Config.SSO)
//	GET  /login/sso/{name}/callback  where the provider sends the browser back
//	GET  /code-review/analytics      reviews and comments by month (Growth; Config.CodeReview)
//	GET  /code-review/observability  each review's model, time, prompt and tokens (Enterprise)
//
// # Sessions
//
// Signing in (account.Accounts.Login) starts a session whose token the
// browser keeps in a cookie: HttpOnly, SameSite=Strict, Path=/, and Secure
// with the __Host- prefix unless [Config.InsecureCookies]. The cookie is
// a console credential only: the API routes of package httpapi read keys
// from the Authorization and x-api-key headers and never from a cookie.
// Signing out ends the session in the store, so that the token is
// worthless even if it was copied.
//
// # Single sign-on
//
// An account's people sign in through its OpenID Connect provider
// (SSOProvider) when the account's plan has single sign-on
// (policy.FeatureSSO, Enterprise): the authorization-code flow with
// PKCE, its state and nonce in a short-lived SameSite=Lax cookie (the
// provider's redirect back is a cross-site navigation), the ID token's
// signature, issuer, audience, expiry and nonce checked, and a verified
// e-mail address of the account's domains required. The callback
// answers with a page, not a redirect, whose link continues to the
// console as a same-site navigation, on which the Strict session cookie
// is sent. Each person signed in is a seat of the plan (Config.Quotas).
// Another plan gets a 403 page naming the feature and the plan that has
// it, as do the code-review pages.
//
// # Forgery and framing
//
// Every POST carries a CSRF token in a hidden field: the session's
// (account.Session.CSRF) once signed in, and before that a random token
// that the sign-in form also sets in a cookie (login CSRF). Tokens are
// compared in constant time; a missing or wrong one gets 403. On top of
// that, [http.CrossOriginProtection] refuses cross-origin browser POSTs
// by their Sec-Fetch-Site or Origin headers. Every response forbids
// framing (X-Frame-Options DENY, frame-ancestors 'none'), sniffing,
// referrers and caching, and carries a Content-Security-Policy that
// allows no source but the pages' own inline script and style, by hash.
//
// # Secrets
//
// A new key's secret is in the body of the response to the POST that
// made it, once, with a Copy Key button that copies it to the clipboard;
// it is never in a URL, a redirect, a cookie or a log line. Logs name
// keys by id and sessions by account, never by token.
package console
