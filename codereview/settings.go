package codereview

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/inferkit/inferkit/httpapi/inprocess"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// Settings are an account's code-review settings, which apply to every
// review of the account, over HTTP and on pull requests. The zero value
// sets nothing.
type Settings struct {
	// Rules is the account's custom ruleset (custom_rulesets, Growth):
	// every review reads it, before a request's own rules; at most
	// 8,000 characters.
	Rules string `json:"rules"`
	// Model is the account's review model (bring_your_own_model,
	// Enterprise), a model of the API's catalog: a review that names no
	// model runs on it instead of the Handler's.
	Model string `json:"model"`
}

// settingsOf returns owner's settings; none set is the zero Settings.
func (l ledger) settingsOf(ctx context.Context, owner string) (Settings, error) {
	var s Settings
	_, err := get(ctx, l.s, doc("settings", owner), &s)
	return s, err
}

// settings serves GET /v1/code-review/settings: the caller's account's
// settings.
func (h *Handler) settings(w http.ResponseWriter, r *http.Request) {
	header, ok := keyHeader(w, r)
	if !ok {
		return
	}
	st, planned, err := h.standingOf(r.Context(), header, h.now())
	if err != nil {
		admitError(w, err, h.now())
		return
	}
	s, err := h.ledger.settingsOf(r.Context(), ownerOf(st, planned, header))
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

// setSettings serves PUT /v1/code-review/settings {rules, model}: the
// caller's account's settings replaced whole. Rules need a plan with
// custom rulesets, a model one with bring-your-own-model (and a model
// the API serves to the caller's key); "" clears either.
func (h *Handler) setSettings(w http.ResponseWriter, r *http.Request) {
	header, ok := keyHeader(w, r)
	if !ok {
		return
	}
	var s Settings
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "the body must be {rules, model}: "+err.Error())
		return
	}
	if len([]rune(s.Rules)) > maxRules {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "rules", fmt.Sprintf("is longer than %d characters", maxRules))
		return
	}
	now := h.now()
	st, planned, err := h.standingOf(r.Context(), header, now)
	if err == nil && planned {
		var feats []ratelimit.Feature
		if s.Rules != "" {
			feats = append(feats, policy.FeatureCustomRulesets)
		}
		if s.Model != "" {
			feats = append(feats, policy.FeatureBringYourOwnModel)
		}
		err = st.check(feats)
	}
	if err != nil {
		admitError(w, err, now)
		return
	}
	if s.Model != "" {
		// The model must be one the API serves to this key.
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "/v1/models/"+url.PathEscape(s.Model), nil)
		for k, vs := range header {
			req.Header[k] = vs
		}
		res, err := inprocess.Do(h.api, req, 1<<20)
		switch {
		case err != nil:
			writeError(w, http.StatusServiceUnavailable, "server_error", "", "the catalog cannot be read: "+err.Error())
			return
		case res.Status != http.StatusOK:
			writeError(w, http.StatusBadRequest, "invalid_request_error", "model", fmt.Sprintf("%q is not a model of the catalog", clipText(s.Model, 100)))
			return
		}
	}
	err = update(r.Context(), h.ledger.s, doc("settings", ownerOf(st, planned, header)), 0, func(old *Settings) error {
		*old = s
		return nil
	})
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}
