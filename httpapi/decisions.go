package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/ratelimit"
)

// decisionRoutes are the decision routes of the spec's api_url. Their
// errors take the chat shape, {error:{message,type,code,param}}.
func (h *Handler) decisionRoutes() []route {
	return []route{
		{"POST /v1/system", formats.FamilyChat, h.decide},
		{"POST /v1/systemone", formats.FamilyChat, h.decide},
		{"GET /v1/system/models", formats.FamilyModels, h.listDecisionModels},
	}
}

// RegisterDecisions registers the decision routes of the spec's api_url
// on mux: POST /v1/system (also served at /v1/systemone, the System One
// path) and GET /v1/system/models. They serve the catalog's decision
// entries; evaluating needs an Engine that also implements
// decision.Engine, as *inference.Engine does.
func (h *Handler) RegisterDecisions(mux *http.ServeMux) { h.register(mux, h.decisionRoutes()) }

// listDecisionModels serves GET /v1/system/models: every decision entry of
// the catalog that the engine serves, apart from the chat models.
func (h *Handler) listDecisionModels(w http.ResponseWriter, r *http.Request) {
	infos := h.engine.Models()
	objects := []catalog.Object{}
	for _, m := range h.models {
		if m.Kind != catalog.KindDecision {
			continue
		}
		if info, ok := served(infos, m.ID); ok {
			objects = append(objects, m.Object(info.ContextLength))
		}
	}
	h.writeJSON(w, r, formats.NewModelList(objects))
}

// decide serves POST /v1/system: a decision request answered by the
// decision model it names.
func (h *Handler) decide(w http.ResponseWriter, r *http.Request) {
	var req decision.Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			h.fail(w, r, err)
			return
		}
		h.fail(w, r, &formats.RequestError{Code: "invalid_json", Message: "the body is not a valid decision request: " + err.Error()})
		return
	}
	if req.Model == "" {
		h.fail(w, r, &formats.RequestError{Param: "model", Code: "missing_required_parameter", Message: "model is required"})
		return
	}
	m, ok := catalog.Lookup(h.models, req.Model)
	var info inference.ModelInfo
	if ok && m.Kind == catalog.KindDecision {
		info, ok = served(h.engine.Models(), m.ID)
	}
	if !ok || m.Kind != catalog.KindDecision {
		h.fail(w, r, fmt.Errorf("%w: %q is not a decision model", inference.ErrModelNotFound, req.Model))
		return
	}
	eng, ok := h.engine.(decision.Engine)
	if !ok {
		h.fail(w, r, errors.New("httpapi: the engine cannot evaluate decisions"))
		return
	}
	// The model reads images when the engine loaded a projector for it,
	// whatever the catalog says.
	ev, err := decision.New(decision.Config{Engine: eng, Model: m.ID, Temperature: m.Calibration, Images: info.Images})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// Checked, framed and tokenized once: an invalid request is refused
	// before any reservation, whatever the key's tier, and admission
	// counts what the model will read.
	p, err := ev.Prepare(req)
	if err != nil {
		h.fail(w, r, decisionError(err))
		return
	}
	a, err := h.admitDecision(w, r, m, p)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := ev.Run(r.Context(), p)
	if a != nil {
		switch {
		case err == nil:
			a.settle(r, ratelimit.Usage{Requests: 1, InputTokens: int64(res.Usage.InputTokens)})
		case r.Context().Err() != nil:
			// The client left mid-evaluation: the state may have been
			// read already, so the estimate is charged.
			a.settle(r, ratelimit.Usage{Requests: 1, InputTokens: a.res.Reserved.InputTokens})
		default:
			a.settle(r, ratelimit.Usage{})
		}
	}
	if err != nil {
		h.fail(w, r, decisionError(err))
		return
	}
	h.writeJSON(w, r, res)
}

// imageTokens is the margin per image of a decision's reservation: an
// image's tokens, which only its model's projector knows once it has
// encoded it, settled to the real count after.
const imageTokens = 256

// admitDecision reserves a prepared decision under the key's rate limits:
// its input tokens and imageTokens per image, nothing as output, at the
// model's prices. It returns nil without a limiter.
func (h *Handler) admitDecision(w http.ResponseWriter, r *http.Request, m catalog.Model, p *decision.Prepared) (*admission, error) {
	a := admissionFrom(r)
	if a == nil {
		return nil, nil
	}
	cost, err := prices(m.Pricing)
	if err != nil {
		return nil, err
	}
	want := ratelimit.Request{InputTokens: int64(p.InputTokens + imageTokens*len(p.Request.Images)), Prices: cost}
	if err := a.reserve(w, r, want); err != nil {
		return nil, err
	}
	return a, nil
}

// decisionError names the field at fault of a decision that fails as a
// client error.
func decisionError(err error) error {
	var de *decision.Error
	switch {
	case errors.As(err, &de):
		return &formats.RequestError{Param: de.Param, Message: de.Param + ": " + de.Message}
	case errors.Is(err, inference.ErrContextLength):
		return &formats.RequestError{Param: "state", Code: "context_length_exceeded", Message: "state: the state and a question exceed the model's context length"}
	}
	return err
}
