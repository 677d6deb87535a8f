package httpapi

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/ratelimit"
)

// The admin API: see RegisterAdmin.

// minAdminKey is the shortest Config.AdminKey.
const minAdminKey = 16

// adminKey checks the admin key: both sides are HMACs under a random
// secret of the process, compared with hmac.Equal, so that neither the
// comparison's time nor a digest says anything of the key.
type adminKey struct {
	secret []byte
	want   []byte
}

func newAdminKey(key string) *adminKey {
	a := &adminKey{secret: make([]byte, 32)}
	rand.Read(a.secret) // never fails (crypto/rand)
	a.want = a.sum(key)
	return a
}

func (a *adminKey) sum(key string) []byte {
	m := hmac.New(sha256.New, a.secret)
	m.Write([]byte(key))
	return m.Sum(nil)
}

// matches reports whether key is the admin key, in constant time.
func (a *adminKey) matches(key string) bool { return hmac.Equal(a.sum(key), a.want) }

// adminRoutes are the admin API's routes; none without an admin key.
func (h *Handler) adminRoutes() []route {
	if h.admin == nil {
		return nil
	}
	return []route{
		{pattern: "POST /v1/admin/accounts", family: formats.FamilyChat, serve: h.adminCreateAccount, meter: meterNone},
		{pattern: "GET /v1/admin/accounts", family: formats.FamilyChat, serve: h.adminListAccounts, meter: meterNone},
		{pattern: "GET /v1/admin/accounts/{id}", family: formats.FamilyChat, serve: h.adminGetAccount, meter: meterNone},
		{pattern: "POST /v1/admin/accounts/{id}/tier", family: formats.FamilyChat, serve: h.adminSetTier, meter: meterNone},
		{pattern: "POST /v1/admin/accounts/{id}/plan", family: formats.FamilyChat, serve: h.adminSetPlan, meter: meterNone},
		{pattern: "POST /v1/admin/api-keys", family: formats.FamilyChat, serve: h.adminCreateKey, meter: meterNone},
		{pattern: "GET /v1/admin/api-keys", family: formats.FamilyChat, serve: h.adminListKeys, meter: meterNone},
		{pattern: "DELETE /v1/admin/api-keys/{id}", family: formats.FamilyChat, serve: h.adminRevokeKey, meter: meterNone},
		{pattern: "POST /v1/admin/credits", family: formats.FamilyChat, serve: h.adminCredits, meter: meterNone},
		{pattern: "GET /v1/admin/usage", family: formats.FamilyChat, serve: h.adminUsage, meter: meterNone},
	}
}

// RegisterAdmin registers the admin API's routes on mux, when
// Config.AdminKey is set (without it, none): JSON routes for the operator,
// or the operator's billing system, to manage Config.Accounts.
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
// Every route takes "Authorization: Bearer <admin key>", compared in
// constant time; an API key, a console cookie or no key is a 401 in
// OpenAI's error shape, as every other error is: a 400 names the
// offending field in param, an unknown account or key is a 404, an id or
// owner taken, a trial used or a trial over a paid plan a 409, and
// revoking a key of the server's configuration (account.Config.StaticKeys)
// a 409. The routes are not rate-limited and Config.Middleware does not
// wrap them. Bodies are JSON objects whose unknown fields are refused.
// An account omitted where it is optional is account.DefaultAccount,
// which owns the keys of a server's configuration.
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
// purchases), "tier" (in force), "pinned_tier" (null when the tier
// follows the credits), "plan": {"name", "state" (active, trialing or
// expired), "trial_ends_at", "price_usd", "features"}}, its plan as at
// the Handler's clock.
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
// reservations hold), "max_monthly_spend_usd" (the tier's cap; null
// without one), "requests", "input_tokens", "cached_input_tokens",
// "output_tokens" (of the settled requests), "tier", "credits_usd",
// "plan"}, as Config.Limiter counts them (ratelimit.Limiter.Usage); a
// Handler without a Limiter meters nothing and answers 501.
func (h *Handler) RegisterAdmin(mux *http.ServeMux) {
	for _, rt := range h.adminRoutes() {
		mux.Handle(rt.pattern, h.wrapAdmin(rt))
	}
}

// wrapAdmin puts an admin route behind the access log, the body read
// deadline, the admin key's check and the body limit: no API key, no
// rate limit, no Config.Middleware.
func (h *Handler) wrapAdmin(rt route) http.Handler {
	var next http.Handler = rt.serve
	next = h.limitBody(next)
	next = h.authenticateAdmin(next)
	next = h.guardBody(next)
	next = h.accessLog(rt.pattern, next)
	return withFamily(rt.family, next)
}

// authenticateAdmin refuses a request without the admin key as a bearer,
// as authenticate refuses one without an API key.
func (h *Handler) authenticateAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := ""
		if scheme, k, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
			key = strings.TrimSpace(k)
		}
		if key == "" || !h.admin.matches(key) {
			h.log.LogAttrs(r.Context(), slog.LevelInfo, "httpapi: missing or invalid admin key", slog.String("path", r.URL.Path))
			skipBody(w, r)
			WriteError(w, r, formats.Unauthorized())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// adminAccount is an account on the wire.
type adminAccount struct {
	Object     string    `json:"object"`
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Owner      *string   `json:"owner"`
	CreatedAt  int64     `json:"created_at"`
	CreditsUSD string    `json:"credits_usd"`
	Tier       string    `json:"tier"`
	PinnedTier *string   `json:"pinned_tier"`
	Plan       adminPlan `json:"plan"`
}

// adminPlan is an account's code-review plan on the wire, at the time of
// the request.
type adminPlan struct {
	Name        string   `json:"name"`
	State       string   `json:"state"`
	TrialEndsAt *int64   `json:"trial_ends_at"`
	PriceUSD    string   `json:"price_usd"`
	Features    []string `json:"features"`
}

// adminKeyObject is an API key on the wire; Key, its secret, only when
// it is created. A static key (of the server's configuration) has no
// creation time and cannot be revoked.
type adminKeyObject struct {
	Object     string `json:"object"`
	ID         string `json:"id"`
	Name       string `json:"name"`
	Key        string `json:"key,omitzero"`
	Hint       string `json:"hint"`
	Account    string `json:"account"`
	CreatedAt  *int64 `json:"created_at"`
	LastUsedAt *int64 `json:"last_used_at"`
	Static     bool   `json:"static,omitzero"`
}

// adminList is a list on the wire.
type adminList[T any] struct {
	Object string `json:"object"`
	Data   []T    `json:"data"`
}

// adminUsage is an account's use of the current month on the wire.
type adminUsage struct {
	Object             string    `json:"object"`
	Account            string    `json:"account"`
	Month              string    `json:"month"`
	SpendUSD           string    `json:"spend_usd"`
	HeldUSD            string    `json:"held_usd"`
	MaxMonthlySpendUSD *string   `json:"max_monthly_spend_usd"`
	Requests           int64     `json:"requests"`
	InputTokens        int64     `json:"input_tokens"`
	CachedInputTokens  int64     `json:"cached_input_tokens"`
	OutputTokens       int64     `json:"output_tokens"`
	Tier               string    `json:"tier"`
	CreditsUSD         string    `json:"credits_usd"`
	Plan               adminPlan `json:"plan"`
}

// unixOrNil returns t in Unix seconds, or nil for the zero time.
func unixOrNil(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	u := t.Unix()
	return &u
}

// stringOrNil returns &s, or nil for "".
func stringOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// accountObject returns a's wire form at now.
func accountObject(a account.Account, now time.Time) adminAccount {
	return adminAccount{Object: "account", ID: a.ID, Name: a.Name, Owner: stringOrNil(a.Owner), CreatedAt: a.Created.Unix(),
		CreditsUSD: a.Credits.String(), Tier: a.Tier().Name, PinnedTier: stringOrNil(a.PinnedTier), Plan: planObject(a, now)}
}

// planObject returns a's plan at now.
func planObject(a account.Account, now time.Time) adminPlan {
	p, state := a.PlanAt(now)
	features := make([]string, len(p.Features))
	for i, f := range p.Features {
		features[i] = string(f)
	}
	return adminPlan{Name: p.Name, State: string(state), TrialEndsAt: unixOrNil(a.Plan.TrialEnds), PriceUSD: p.Price.String(), Features: features}
}

// keyObject returns k's wire form.
func keyObject(k account.Key) adminKeyObject {
	return adminKeyObject{Object: "api_key", ID: k.ID, Name: k.Name, Hint: k.Hint, Account: k.Account,
		CreatedAt: unixOrNil(k.Created), LastUsedAt: unixOrNil(k.LastUsed), Static: k.Static}
}

// decodeAdmin reads a request's JSON object into v, refusing unknown
// fields and anything after the object.
func decodeAdmin(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("data after the JSON object")
	}
	var mb *http.MaxBytesError
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mb):
		return err // 413
	case errors.As(err, &te) && te.Field != "":
		return &formats.RequestError{Param: te.Field, Code: "invalid_type",
			Message: fmt.Sprintf("%s: want a JSON %s, got %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &formats.RequestError{Param: field, Code: "unknown_parameter", Message: "unknown parameter: " + field}
	}
	return &formats.RequestError{Code: "invalid_json", Message: "the body is not a JSON object of the expected shape: " + err.Error()}
}

// jsonKind names a Go kind as JSON does.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	}
	return "number"
}

// adminError maps an account error to the admin API's: ErrNotFound of
// what (such as `account "acct_1"`) is a 404, ErrExists a 409,
// ErrTrialUsed and ErrSubscribed 409s, an *account.ArgError a 400 about
// its argument; the rest are server errors.
func adminError(err error, what, param string) error {
	var arg *account.ArgError
	switch {
	case errors.Is(err, account.ErrNotFound):
		return &formats.Error{Status: http.StatusNotFound, Code: "not_found", Param: param, Message: "no " + what, Err: err}
	case errors.Is(err, account.ErrExists):
		return &formats.Error{Status: http.StatusConflict, Code: "already_exists", Param: param,
			Message: strings.TrimPrefix(err.Error(), "account: "), Err: err}
	case errors.Is(err, account.ErrPaymentUsed):
		return &formats.Error{Status: http.StatusConflict, Code: "payment_used", Param: "id",
			Message: "id: this payment id was credited to another account", Err: err}
	case errors.Is(err, account.ErrTrialUsed):
		return &formats.Error{Status: http.StatusConflict, Code: "trial_used", Param: param,
			Message: strings.TrimPrefix(err.Error(), "account: "), Err: err}
	case errors.Is(err, account.ErrSubscribed):
		return &formats.Error{Status: http.StatusConflict, Code: "already_subscribed", Param: param,
			Message: strings.TrimPrefix(err.Error(), "account: "), Err: err}
	case errors.As(err, &arg):
		// The account package names the argument as the API's fields,
		// but for a purchase's amount.
		param = arg.Arg
		if param == "amount" {
			param = "amount_usd"
		}
		if arg.Missing {
			return missingParam(param)
		}
		return &formats.Error{Status: http.StatusBadRequest, Code: "invalid_value", Param: param,
			Message: param + ": " + arg.Reason, Err: err}
	}
	return err
}

// missingParam is the 400 of a required field that is absent or empty.
func missingParam(param string) error {
	return &formats.RequestError{Param: param, Code: "missing_required_parameter", Message: "missing required parameter: " + param}
}

// invalidParam is the 400 of a field's value.
func invalidParam(param, format string, args ...any) error {
	return &formats.RequestError{Param: param, Code: "invalid_value", Message: param + ": " + fmt.Sprintf(format, args...)}
}

// adminCreateAccount serves POST /v1/admin/accounts.
func (h *Handler) adminCreateAccount(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Owner    string `json:"owner"`
		Password string `json:"password"`
	}
	if err := decodeAdmin(r, &body); err != nil {
		h.fail(w, r, err)
		return
	}
	a, err := h.accounts.CreateAccount(r.Context(), account.NewAccount{ID: body.ID, Name: body.Name, Owner: body.Owner, Password: body.Password})
	if err != nil {
		param := ""
		if errors.Is(err, account.ErrExists) && body.Owner == "" {
			param = "id" // else the id or the owner
		}
		h.fail(w, r, adminError(err, "account", param))
		return
	}
	h.log.LogAttrs(r.Context(), slog.LevelInfo, "httpapi: admin: account created", slog.String("account", a.ID))
	h.writeJSONStatus(w, r, http.StatusCreated, accountObject(a, h.now()))
}

// adminListAccounts serves GET /v1/admin/accounts.
func (h *Handler) adminListAccounts(w http.ResponseWriter, r *http.Request) {
	all, err := h.accounts.List(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.now()
	out := adminList[adminAccount]{Object: "list", Data: make([]adminAccount, 0, len(all))}
	for _, a := range all {
		out.Data = append(out.Data, accountObject(a, now))
	}
	h.writeJSONStatus(w, r, http.StatusOK, out)
}

// adminGetAccount serves GET /v1/admin/accounts/{id}.
func (h *Handler) adminGetAccount(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a, err := h.accounts.Account(r.Context(), id)
	if err != nil {
		h.fail(w, r, adminError(err, fmt.Sprintf("account %q", clip(id)), ""))
		return
	}
	h.writeJSONStatus(w, r, http.StatusOK, accountObject(a, h.now()))
}

// adminSetTier serves POST /v1/admin/accounts/{id}/tier: a tier's name
// pins it, "" unpins.
func (h *Handler) adminSetTier(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Tier *string `json:"tier"`
	}
	if err := decodeAdmin(r, &body); err != nil {
		h.fail(w, r, err)
		return
	}
	if body.Tier == nil {
		h.fail(w, r, missingParam("tier"))
		return
	}
	name := *body.Tier
	if name != "" {
		t, err := h.accounts.Tiers().Lookup(name)
		if err != nil {
			h.fail(w, r, invalidParam("tier", "unknown tier %q: want default, tier2, tier3, unlimited, or \"\" to follow the credits", clip(name)))
			return
		}
		name = t.Name
	}
	id := r.PathValue("id")
	a, err := h.accounts.SetTier(r.Context(), id, name)
	if err != nil {
		h.fail(w, r, adminError(err, fmt.Sprintf("account %q", clip(id)), "tier"))
		return
	}
	h.log.LogAttrs(r.Context(), slog.LevelInfo, "httpapi: admin: tier set", slog.String("account", a.ID), slog.String("tier", name))
	h.writeJSONStatus(w, r, http.StatusOK, accountObject(a, h.now()))
}

// adminSetPlan serves POST /v1/admin/accounts/{id}/plan: a trial of the
// plan, or a subscription to it.
func (h *Handler) adminSetPlan(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Plan  string `json:"plan"`
		Trial bool   `json:"trial"`
	}
	if err := decodeAdmin(r, &body); err != nil {
		h.fail(w, r, err)
		return
	}
	if body.Plan == "" {
		h.fail(w, r, missingParam("plan"))
		return
	}
	p, err := h.accounts.Plans().Lookup(body.Plan)
	switch {
	case err != nil:
		h.fail(w, r, invalidParam("plan", "unknown plan %q: want free, team, growth or enterprise", clip(body.Plan)))
		return
	case body.Trial && p.Trial == 0:
		h.fail(w, r, invalidParam("trial", "the %s plan has no trial", p.Name))
		return
	}
	id := r.PathValue("id")
	var a account.Account
	if body.Trial {
		a, err = h.accounts.StartTrial(r.Context(), id, p.Name)
	} else {
		a, err = h.accounts.Subscribe(r.Context(), id, p.Name)
	}
	if err != nil {
		param := "plan"
		if body.Trial {
			param = "trial"
		}
		h.fail(w, r, adminError(err, fmt.Sprintf("account %q", clip(id)), param))
		return
	}
	h.log.LogAttrs(r.Context(), slog.LevelInfo, "httpapi: admin: plan set", slog.String("account", a.ID),
		slog.String("plan", p.Name), slog.Bool("trial", body.Trial))
	h.writeJSONStatus(w, r, http.StatusOK, accountObject(a, h.now()))
}

// adminCreateKey serves POST /v1/admin/api-keys: the only answer that
// holds a key's secret.
func (h *Handler) adminCreateKey(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name    string `json:"name"`
		Account string `json:"account"`
	}
	if err := decodeAdmin(r, &body); err != nil {
		h.fail(w, r, err)
		return
	}
	acct := body.Account
	if acct == "" {
		acct = account.DefaultAccount
	}
	k, secret, err := h.accounts.CreateKey(r.Context(), acct, body.Name)
	if err != nil {
		h.fail(w, r, adminError(err, fmt.Sprintf("account %q", clip(acct)), "account"))
		return
	}
	h.log.LogAttrs(r.Context(), slog.LevelInfo, "httpapi: admin: API key created", slog.String("account", k.Account), slog.String("key_id", k.ID))
	out := keyObject(k)
	out.Key = secret
	h.writeJSONStatus(w, r, http.StatusCreated, out)
}

// adminListKeys serves GET /v1/admin/api-keys?account=ID.
func (h *Handler) adminListKeys(w http.ResponseWriter, r *http.Request) {
	acct := r.URL.Query().Get("account")
	if acct == "" {
		acct = account.DefaultAccount
	}
	// An unknown account is a 404, not an empty list.
	if _, err := h.accounts.Account(r.Context(), acct); err != nil {
		h.fail(w, r, adminError(err, fmt.Sprintf("account %q", clip(acct)), "account"))
		return
	}
	keys, err := h.accounts.Keys(r.Context(), acct)
	if err != nil {
		h.fail(w, r, adminError(err, fmt.Sprintf("account %q", clip(acct)), "account"))
		return
	}
	out := adminList[adminKeyObject]{Object: "list", Data: make([]adminKeyObject, 0, len(keys))}
	for _, k := range keys {
		out.Data = append(out.Data, keyObject(k))
	}
	h.writeJSONStatus(w, r, http.StatusOK, out)
}

// adminRevokeKey serves DELETE /v1/admin/api-keys/{id}.
func (h *Handler) adminRevokeKey(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if k, err := h.accounts.Key(r.Context(), id); err == nil && k.Static {
		h.fail(w, r, &formats.Error{Status: http.StatusConflict, Code: "static_key",
			Message: fmt.Sprintf("API key %q is a static key of the server's configuration: remove it there", id)})
		return
	}
	if err := h.accounts.RevokeKey(r.Context(), "", id); err != nil {
		h.fail(w, r, adminError(err, fmt.Sprintf("API key %q", clip(id)), ""))
		return
	}
	h.log.LogAttrs(r.Context(), slog.LevelInfo, "httpapi: admin: API key revoked", slog.String("key_id", id))
	h.writeJSONStatus(w, r, http.StatusOK, struct {
		Object  string `json:"object"`
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}{"api_key.deleted", id, true})
}

// adminCredits serves POST /v1/admin/credits: a purchase, recorded once
// by its payment id.
func (h *Handler) adminCredits(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID      string          `json:"id"`
		Account string          `json:"account"`
		Amount  json.RawMessage `json:"amount_usd"`
	}
	if err := decodeAdmin(r, &body); err != nil {
		h.fail(w, r, err)
		return
	}
	if body.ID == "" {
		h.fail(w, r, missingParam("id"))
		return
	}
	amount, err := parseAmount(body.Amount)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	acct := body.Account
	if acct == "" {
		acct = account.DefaultAccount
	}
	a, err := h.accounts.AddCredits(r.Context(), account.Purchase{ID: body.ID, Account: acct, Amount: amount, At: h.now()})
	if err != nil {
		h.fail(w, r, adminError(err, fmt.Sprintf("account %q", clip(acct)), "account"))
		return
	}
	h.log.LogAttrs(r.Context(), slog.LevelInfo, "httpapi: admin: credits recorded", slog.String("account", a.ID),
		slog.String("payment", body.ID), slog.String("amount_usd", amount.String()), slog.String("tier", a.Tier().Name))
	h.writeJSONStatus(w, r, http.StatusOK, accountObject(a, h.now()))
}

// parseAmount reads amount_usd: a decimal string, or a JSON number read
// from its text; more than 0.
func parseAmount(raw json.RawMessage) (ratelimit.Money, error) {
	text := string(bytes.TrimSpace(raw))
	if text == "" || text == "null" {
		return 0, missingParam("amount_usd")
	}
	if text[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, invalidParam("amount_usd", "not a JSON string")
		}
	}
	m, err := ratelimit.ParseMoney(text)
	switch {
	case err != nil || text == "":
		return 0, invalidParam("amount_usd", "want a decimal amount of US dollars such as \"40\" or \"12.50\" (nine decimals at most, no sign or exponent)")
	case m <= 0:
		return 0, invalidParam("amount_usd", "want more than 0")
	}
	return m, nil
}

// adminUsage serves GET /v1/admin/usage?account=ID: the month's spend
// and tokens, as the Limiter counted them, and the account's tier,
// credits and plan.
func (h *Handler) adminUsage(w http.ResponseWriter, r *http.Request) {
	acct := r.URL.Query().Get("account")
	if acct == "" {
		acct = account.DefaultAccount
	}
	a, err := h.accounts.Account(r.Context(), acct)
	if err != nil {
		h.fail(w, r, adminError(err, fmt.Sprintf("account %q", clip(acct)), "account"))
		return
	}
	if h.limits == nil {
		h.fail(w, r, &formats.Error{Status: http.StatusNotImplemented, Code: "not_metered",
			Message: "this server meters no usage: it has no rate limiter"})
		return
	}
	now := h.now()
	u, err := h.limits.Usage(r.Context(), a.ID, now)
	if err != nil {
		h.fail(w, r, fmt.Errorf("httpapi: rate limiter: %w", err))
		return
	}
	tier := a.Tier()
	out := adminUsage{Object: "usage", Account: a.ID, Month: cmp.Or(u.Month, ratelimit.Month(now)), SpendUSD: u.Spent.String(), HeldUSD: u.Held.String(),
		Requests: u.Requests, InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens, OutputTokens: u.OutputTokens,
		Tier: tier.Name, CreditsUSD: a.Credits.String(), Plan: planObject(a, now)}
	if tier.MaxMonthlySpend > 0 {
		out.MaxMonthlySpendUSD = stringOrNil(tier.MaxMonthlySpend.String())
	}
	h.writeJSONStatus(w, r, http.StatusOK, out)
}
