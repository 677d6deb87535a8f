package httpapi

import (
	"net/http"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats"
)

// listModels serves GET /v1/models: every chat entry of the catalog that
// the engine serves, with the context one request may really use.
func (h *Handler) listModels(w http.ResponseWriter, r *http.Request) {
	infos := h.engine.Models()
	objects := []catalog.Object{}
	for _, m := range h.models {
		if !isChat(m) {
			continue
		}
		if info, ok := served(infos, m.ID); ok {
			objects = append(objects, m.Object(info.ContextLength))
		}
	}
	h.writeJSON(w, r, formats.NewModelList(objects))
}

// getModel serves GET /v1/models/{model_id}; an alias finds its entry.
func (h *Handler) getModel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("model_id")
	m, info, ok := h.chatModel(id)
	if !ok {
		h.fail(w, r, formats.ModelNotFound(id))
		return
	}
	h.writeJSON(w, r, m.Object(info.ContextLength))
}
