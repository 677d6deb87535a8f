package httpapi

import (
	"net/http"
	"os"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats"
)

// listModels serves GET /v1/models: every chat entry of the catalog that
// the engine serves, with the context one request may really use, and
// under "models" the decision entries in System One's shape.
func (h *Handler) listModels(w http.ResponseWriter, r *http.Request) {
	infos := h.engine.Models()
	objects := []catalog.Object{}
	var decisions []formats.SystemOneModel
	for _, m := range h.models {
		info, ok := served(infos, m.ID)
		if !ok {
			continue
		}
		switch {
		case isChat(m):
			objects = append(objects, m.Object(info.ContextLength))
		case m.Kind == catalog.KindDecision:
			decisions = append(decisions, formats.SystemOneModel{Name: m.ID, Description: m.Description, ReleaseDate: h.releaseDate(m)})
		}
	}
	list := formats.NewModelList(objects)
	list.Models = decisions
	h.writeJSON(w, r, list)
}

// releaseDate is the day a model came out: its catalog creation time,
// or else the modification time of its file; today when neither is known.
func (h *Handler) releaseDate(m catalog.Model) string {
	t := time.Unix(m.Created, 0)
	if m.Created == 0 {
		t = h.now()
		if fi, err := os.Stat(m.Path); err == nil {
			t = fi.ModTime()
		}
	}
	return t.UTC().Format(time.DateOnly)
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
