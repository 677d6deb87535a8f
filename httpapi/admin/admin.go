package admin

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/ratelimit"
)

// adminAccount is an account on the wire.
type adminAccount struct {
	Object     string    `json:"object"`
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Owner      *string   `json:"owner"`
	CreatedAt  int64     `json:"created_at"`
	CreditsUSD string    `json:"credits_usd"`
	Billing    string    `json:"billing"`
	BalanceUSD *string   `json:"balance_usd"`
	Tier       *string   `json:"tier"`
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
	PlanFeeUSD         string    `json:"plan_fee_usd"`
	MaxMonthlySpendUSD *string   `json:"max_monthly_spend_usd"`
	Requests           int64     `json:"requests"`
	InputTokens        int64     `json:"input_tokens"`
	CachedInputTokens  int64     `json:"cached_input_tokens"`
	OutputTokens       int64     `json:"output_tokens"`
	Tier               *string   `json:"tier"`
	CreditsUSD         string    `json:"credits_usd"`
	Billing            string    `json:"billing"`
	BalanceUSD         *string   `json:"balance_usd"`
	HeldBalanceUSD     *string   `json:"held_balance_usd"`
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

// accountObject returns a's wire form at now, under billing.
func accountObject(a account.Account, billing account.Billing, now time.Time) adminAccount {
	balance, _ := balanceOf(a, billing)
	return adminAccount{Object: "account", ID: a.ID, Name: a.Name, Owner: stringOrNil(a.Owner), CreatedAt: a.Created.Unix(),
		CreditsUSD: a.Credits.String(), Billing: string(billing), BalanceUSD: balance,
		Tier: stringOrNil(a.Tier().Name), PinnedTier: stringOrNil(a.PinnedTier), Plan: planObject(a, now)}
}

// balanceOf returns a's prepaid balance and what requests in flight
// hold of it, in USD: nil under postpaid billing, which has none.
func balanceOf(a account.Account, billing account.Billing) (balance, held *string) {
	if billing != account.Prepaid {
		return nil, nil
	}
	return stringOrNil(a.Balance().String()), stringOrNil(a.Held.String())
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

// createAccount serves POST /v1/admin/accounts.
func (api *API) createAccount(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Owner    string `json:"owner"`
		Password string `json:"password"`
	}
	if err := decodeAdmin(r, &body); err != nil {
		api.fail(w, r, err)
		return
	}
	a, err := api.accounts.CreateAccount(r.Context(), account.NewAccount{ID: body.ID, Name: body.Name, Owner: body.Owner, Password: body.Password})
	if err != nil {
		param := ""
		if errors.Is(err, account.ErrExists) && body.Owner == "" {
			param = "id" // else the id or the owner
		}
		api.fail(w, r, adminError(err, "account", param))
		return
	}
	api.log.LogAttrs(r.Context(), slog.LevelInfo, "admin: account created", slog.String("account", a.ID))
	api.writeJSON(w, r, http.StatusCreated, accountObject(a, api.accounts.Billing(), api.now()))
}

// listAccounts serves GET /v1/admin/accounts.
func (api *API) listAccounts(w http.ResponseWriter, r *http.Request) {
	all, err := api.accounts.List(r.Context())
	if err != nil {
		api.fail(w, r, err)
		return
	}
	now := api.now()
	out := adminList[adminAccount]{Object: "list", Data: make([]adminAccount, 0, len(all))}
	for _, a := range all {
		out.Data = append(out.Data, accountObject(a, api.accounts.Billing(), now))
	}
	api.writeJSON(w, r, http.StatusOK, out)
}

// getAccount serves GET /v1/admin/accounts/{id}.
func (api *API) getAccount(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a, err := api.accounts.Account(r.Context(), id)
	if err != nil {
		api.fail(w, r, adminError(err, fmt.Sprintf("account %q", httpapi.Clip(id)), ""))
		return
	}
	api.writeJSON(w, r, http.StatusOK, accountObject(a, api.accounts.Billing(), api.now()))
}

// setTier serves POST /v1/admin/accounts/{id}/tier: a tier's name
// pins it, "" unpins.
func (api *API) setTier(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Tier *string `json:"tier"`
	}
	if err := decodeAdmin(r, &body); err != nil {
		api.fail(w, r, err)
		return
	}
	if body.Tier == nil {
		api.fail(w, r, missingParam("tier"))
		return
	}
	name := *body.Tier
	if name != "" {
		t, err := api.accounts.Tiers().Lookup(name)
		if err != nil {
			api.fail(w, r, invalidParam("tier", "unknown tier %q: want default, tier2, tier3, unlimited, or \"\" to follow the credits", httpapi.Clip(name)))
			return
		}
		name = t.Name
	}
	id := r.PathValue("id")
	a, err := api.accounts.SetTier(r.Context(), id, name)
	if err != nil {
		api.fail(w, r, adminError(err, fmt.Sprintf("account %q", httpapi.Clip(id)), "tier"))
		return
	}
	api.log.LogAttrs(r.Context(), slog.LevelInfo, "admin: tier set", slog.String("account", a.ID), slog.String("tier", name))
	api.writeJSON(w, r, http.StatusOK, accountObject(a, api.accounts.Billing(), api.now()))
}

// setPlan serves POST /v1/admin/accounts/{id}/plan: a trial of the
// plan, or a subscription to it.
func (api *API) setPlan(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Plan  string `json:"plan"`
		Trial bool   `json:"trial"`
	}
	if err := decodeAdmin(r, &body); err != nil {
		api.fail(w, r, err)
		return
	}
	if body.Plan == "" {
		api.fail(w, r, missingParam("plan"))
		return
	}
	p, err := api.accounts.Plans().Lookup(body.Plan)
	switch {
	case err != nil:
		api.fail(w, r, invalidParam("plan", "unknown plan %q: want free, team, growth or enterprise", httpapi.Clip(body.Plan)))
		return
	case body.Trial && p.Trial == 0:
		api.fail(w, r, invalidParam("trial", "the %s plan has no trial", p.Name))
		return
	}
	id := r.PathValue("id")
	var a account.Account
	if body.Trial {
		a, err = api.accounts.StartTrial(r.Context(), id, p.Name)
	} else {
		a, err = api.accounts.Subscribe(r.Context(), id, p.Name)
	}
	if err != nil {
		param := "plan"
		if body.Trial {
			param = "trial"
		}
		api.fail(w, r, adminError(err, fmt.Sprintf("account %q", httpapi.Clip(id)), param))
		return
	}
	api.log.LogAttrs(r.Context(), slog.LevelInfo, "admin: plan set", slog.String("account", a.ID),
		slog.String("plan", p.Name), slog.Bool("trial", body.Trial))
	api.writeJSON(w, r, http.StatusOK, accountObject(a, api.accounts.Billing(), api.now()))
}

// createKey serves POST /v1/admin/api-keys: the only answer that
// holds a key's secret.
func (api *API) createKey(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name    string `json:"name"`
		Account string `json:"account"`
	}
	if err := decodeAdmin(r, &body); err != nil {
		api.fail(w, r, err)
		return
	}
	acct := body.Account
	if acct == "" {
		acct = account.DefaultAccount
	}
	k, secret, err := api.accounts.CreateKey(r.Context(), acct, body.Name)
	if err != nil {
		api.fail(w, r, adminError(err, fmt.Sprintf("account %q", httpapi.Clip(acct)), "account"))
		return
	}
	api.log.LogAttrs(r.Context(), slog.LevelInfo, "admin: API key created", slog.String("account", k.Account), slog.String("key_id", k.ID))
	out := keyObject(k)
	out.Key = secret
	api.writeJSON(w, r, http.StatusCreated, out)
}

// listKeys serves GET /v1/admin/api-keys?account=ID.
func (api *API) listKeys(w http.ResponseWriter, r *http.Request) {
	acct := r.URL.Query().Get("account")
	if acct == "" {
		acct = account.DefaultAccount
	}
	// An unknown account is a 404, not an empty list.
	if _, err := api.accounts.Account(r.Context(), acct); err != nil {
		api.fail(w, r, adminError(err, fmt.Sprintf("account %q", httpapi.Clip(acct)), "account"))
		return
	}
	keys, err := api.accounts.Keys(r.Context(), acct)
	if err != nil {
		api.fail(w, r, adminError(err, fmt.Sprintf("account %q", httpapi.Clip(acct)), "account"))
		return
	}
	out := adminList[adminKeyObject]{Object: "list", Data: make([]adminKeyObject, 0, len(keys))}
	for _, k := range keys {
		out.Data = append(out.Data, keyObject(k))
	}
	api.writeJSON(w, r, http.StatusOK, out)
}

// revokeKey serves DELETE /v1/admin/api-keys/{id}.
func (api *API) revokeKey(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if k, err := api.accounts.Key(r.Context(), id); err == nil && k.Static {
		api.fail(w, r, &formats.Error{Status: http.StatusConflict, Code: "static_key",
			Message: fmt.Sprintf("API key %q is a static key of the server's configuration: remove it there", id)})
		return
	}
	if err := api.accounts.RevokeKey(r.Context(), "", id); err != nil {
		api.fail(w, r, adminError(err, fmt.Sprintf("API key %q", httpapi.Clip(id)), ""))
		return
	}
	api.log.LogAttrs(r.Context(), slog.LevelInfo, "admin: API key revoked", slog.String("key_id", id))
	api.writeJSON(w, r, http.StatusOK, struct {
		Object  string `json:"object"`
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}{"api_key.deleted", id, true})
}

// addCredits serves POST /v1/admin/credits: a purchase, recorded once
// by its payment id.
func (api *API) addCredits(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID      string          `json:"id"`
		Account string          `json:"account"`
		Amount  json.RawMessage `json:"amount_usd"`
	}
	if err := decodeAdmin(r, &body); err != nil {
		api.fail(w, r, err)
		return
	}
	if body.ID == "" {
		api.fail(w, r, missingParam("id"))
		return
	}
	amount, err := parseAmount(body.Amount)
	if err != nil {
		api.fail(w, r, err)
		return
	}
	acct := body.Account
	if acct == "" {
		acct = account.DefaultAccount
	}
	a, err := api.accounts.AddCredits(r.Context(), account.Purchase{ID: body.ID, Account: acct, Amount: amount, At: api.now()})
	if err != nil {
		api.fail(w, r, adminError(err, fmt.Sprintf("account %q", httpapi.Clip(acct)), "account"))
		return
	}
	api.log.LogAttrs(r.Context(), slog.LevelInfo, "admin: credits recorded", slog.String("account", a.ID),
		slog.String("payment", body.ID), slog.String("amount_usd", amount.String()), slog.String("tier", a.Tier().Name))
	api.writeJSON(w, r, http.StatusOK, accountObject(a, api.accounts.Billing(), api.now()))
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

// monthUsage serves GET /v1/admin/usage?account=ID: the month's spend
// and tokens, as the Limiter counted them, and the account's tier,
// credits and plan.
func (api *API) monthUsage(w http.ResponseWriter, r *http.Request) {
	acct := r.URL.Query().Get("account")
	if acct == "" {
		acct = account.DefaultAccount
	}
	a, err := api.accounts.Account(r.Context(), acct)
	if err != nil {
		api.fail(w, r, adminError(err, fmt.Sprintf("account %q", httpapi.Clip(acct)), "account"))
		return
	}
	if api.usage == nil {
		api.fail(w, r, &formats.Error{Status: http.StatusNotImplemented, Code: "not_metered",
			Message: "this server meters no usage: it has no rate limiter"})
		return
	}
	now := api.now()
	u, err := api.usage.Usage(r.Context(), a.ID, now)
	if err != nil {
		api.fail(w, r, fmt.Errorf("admin: rate limiter: %w", err))
		return
	}
	tier := a.Tier()
	out := adminUsage{Object: "usage", Account: a.ID, Month: cmp.Or(u.Month, ratelimit.Month(now)), SpendUSD: u.Spent.String(), HeldUSD: u.Held.String(), PlanFeeUSD: u.PlanFee.String(),
		Requests: u.Requests, InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens, OutputTokens: u.OutputTokens,
		Tier: stringOrNil(tier.Name), CreditsUSD: a.Credits.String(), Billing: string(api.accounts.Billing()), Plan: planObject(a, now)}
	out.BalanceUSD, out.HeldBalanceUSD = balanceOf(a, api.accounts.Billing())
	if tier.MaxMonthlySpend > 0 {
		out.MaxMonthlySpendUSD = stringOrNil(tier.MaxMonthlySpend.String())
	}
	api.writeJSON(w, r, http.StatusOK, out)
}
