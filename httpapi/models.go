package httpapi

import (
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
)

// listModels serves GET /v1/models: every chat and embedding entry of
// the catalog that the engine serves, with the context one request may
// really use (and an embedding model's type and vector length), and
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
			objects = append(objects, chatObject(m, info))
		case m.Kind == catalog.KindEmbedding:
			objects = append(objects, embeddingObject(m, info))
		case m.Kind == catalog.KindRerank:
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
// or else the modification time of its file (see fileTimes); today when
// neither is known.
func (h *Handler) releaseDate(m catalog.Model) string {
	t := time.Unix(m.Created, 0)
	if m.Created == 0 {
		t = h.now()
	}
	return t.UTC().Format(time.DateOnly)
}

// fileTimes sets the Created of every entry without one to the
// modification time of its file, as the Handler starts: what the
// listing's created and a decision model's release date give. A file
// that cannot be read leaves 0.
func fileTimes(models []catalog.Model) {
	for i, m := range models {
		if m.Created != 0 {
			continue
		}
		if fi, err := os.Stat(m.Path); err == nil && fi.ModTime().Unix() > 0 {
			models[i].Created = fi.ModTime().Unix()
		}
	}
}

// getModel serves GET /v1/models/{model_id}, a chat or embedding model;
// an alias finds its entry.
func (h *Handler) getModel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("model_id")
	if m, info, ok := h.embeddingModel(id); ok {
		h.writeJSON(w, r, embeddingObject(m, info))
		return
	}
	if m, ok := catalog.Lookup(h.models, id); ok && m.Kind == catalog.KindRerank {
		if info, ok := served(h.engine.Models(), m.ID); ok {
			h.writeJSON(w, r, m.Object(info.ContextLength))
			return
		}
	}
	m, info, ok := h.chatModel(id)
	if !ok {
		h.fail(w, r, formats.ModelNotFound(id))
		return
	}
	h.writeJSON(w, r, chatObject(m, info))
}

// chatObject is a chat model's catalog object, with the context one
// request may really use. It lists images among the inputs when the
// engine loaded a projector for the model, and web_search among the
// features when the engine has a search backend, and only then, whatever
// the catalog entry says.
func chatObject(m catalog.Model, info inference.ModelInfo) catalog.Object {
	o := m.Object(info.ContextLength)
	o.SupportedFeatures = slices.DeleteFunc(o.SupportedFeatures, func(s string) bool { return s == "web_search" })
	if info.WebSearch {
		o.SupportedFeatures = append(o.SupportedFeatures, "web_search")
	}
	hasImage := slices.Contains(o.InputModalities, "image")
	switch {
	case info.Images && !hasImage:
		o.InputModalities = append(slices.Clone(o.InputModalities), "image")
	case !info.Images && hasImage:
		o.InputModalities = slices.DeleteFunc(slices.Clone(o.InputModalities), func(s string) bool { return s == "image" })
	}
	return o
}
