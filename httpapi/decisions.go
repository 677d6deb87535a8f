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

// decisionRoutes are the decision routes of the spec's api_url. The
// spec's own path, /v1/system, answers errors in the chat shape,
// {error:{message,type,code,param}}; /v1/systemone, the path of System
// One's official SDKs, in System One's (see formats.StyleSystemOne).
func (h *Handler) decisionRoutes() []route {
	return []route{
		{"POST /v1/system", formats.StyleChat, h.decide, meterTokens},
		{"POST /v1/systemone", formats.StyleSystemOne, h.decide, meterTokens},
		{"GET /v1/system/models", formats.StyleModels, h.listDecisionModels, meterRequest},
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

// DefaultDecisionModel is the model id that System One's official SDKs
// send unless told otherwise. It names the catalog's decision entry that
// has it as an alias, or else the first decision entry the engine serves.
const DefaultDecisionModel = "jev-latest"

// decide serves POST /v1/system: a decision request answered by the
// decision model it names.
func (h *Handler) decide(w http.ResponseWriter, r *http.Request) {
	var req decision.Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		h.fail(w, r, decodeError(err))
		return
	}
	if req.Model == "" {
		h.fail(w, r, &formats.RequestError{Param: "model", Code: "missing_required_parameter", Message: "model is required"})
		return
	}
	m, info, ok := h.decisionModel(req.Model)
	if !ok {
		h.fail(w, r, fmt.Errorf("%w: %q is not a decision model", inference.ErrModelNotFound, req.Model))
		return
	}
	eng, ok := h.engine.(decision.Engine)
	if !ok {
		h.fail(w, r, errors.New("httpapi: the engine cannot evaluate decisions"))
		return
	}
	ev, err := h.evaluator(eng, m, info)
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
	h.metrics.decision(m.ID, res.Usage)
	h.writeJSON(w, r, res)
}

// evaluator returns the Evaluator of decision model m, made on its first
// request. The model reads images when the engine loaded a projector for
// it, whatever the catalog says.
func (h *Handler) evaluator(eng decision.Engine, m catalog.Model, info inference.ModelInfo) (*decision.Evaluator, error) {
	if ev, ok := h.evaluators.Load(m.ID); ok {
		return ev.(*decision.Evaluator), nil
	}
	ev, err := decision.New(decision.Config{Engine: eng, Model: m.ID, Temperature: m.Calibration, Images: info.Images})
	if err != nil {
		return nil, err
	}
	got, _ := h.evaluators.LoadOrStore(m.ID, ev)
	return got.(*decision.Evaluator), nil
}

// decisionModel finds the decision entry of the catalog that id names
// (DefaultDecisionModel included) and the engine serves.
func (h *Handler) decisionModel(id string) (catalog.Model, inference.ModelInfo, bool) {
	infos := h.engine.Models()
	if m, ok := catalog.Lookup(h.models, id); ok {
		info, served := served(infos, m.ID)
		return m, info, served && m.Kind == catalog.KindDecision
	}
	if id != DefaultDecisionModel {
		return catalog.Model{}, inference.ModelInfo{}, false
	}
	for _, m := range h.models {
		if info, ok := served(infos, m.ID); ok && m.Kind == catalog.KindDecision {
			return m, info, true
		}
	}
	return catalog.Model{}, inference.ModelInfo{}, false
}

// decodeError is the client error of a decision body that does not
// decode: too large, a value of the wrong JSON type (naming where), or
// not JSON.
func decodeError(err error) error {
	var mb *http.MaxBytesError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &mb):
		return err
	case errors.As(err, &te) && te.Field != "":
		return &formats.RequestError{Param: te.Field, Code: "invalid_type",
			Message: fmt.Sprintf("%s: must be %s, not %s", te.Field, jsonType(te.Type.Kind().String()), te.Value)}
	}
	return &formats.RequestError{Code: "invalid_json", Message: "the body is not a valid decision request: " + err.Error()}
}

// jsonType names a Go kind as JSON's type.
func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

// imageTokens is the margin per picture of a decision's reservation: a
// picture's tokens, which only its model's projector knows once it has
// encoded it, settled to the real count after.
const imageTokens = 256

// admitDecision reserves a prepared decision under the key's rate limits:
// its input tokens and imageTokens per picture it may read (each image,
// and each frame a video may give), nothing as output, at the model's
// prices. It returns nil without a limiter.
func (h *Handler) admitDecision(w http.ResponseWriter, r *http.Request, m catalog.Model, p *decision.Prepared) (*admission, error) {
	return h.reserve(w, r, m, int64(p.InputTokens+imageTokens*p.Pictures), 0, 0)
}

// decisionError names the field at fault of a decision that fails as a
// client error.
func decisionError(err error) error {
	var de *decision.Error
	switch {
	case errors.As(err, &de):
		code := map[string]string{"missing": "missing_required_parameter", "string_type": "invalid_type"}[de.Type]
		return &formats.RequestError{Param: de.Param, Loc: de.Loc, Code: code, Message: de.Param + ": " + de.Message}
	case errors.Is(err, inference.ErrContextLength):
		return &formats.RequestError{Param: "state", Code: "context_length_exceeded", Message: "state: the state and a question exceed the model's context length"}
	}
	return err
}
