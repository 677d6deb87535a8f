package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/embeddings"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/ratelimit"
)

// Embedder is what POST /v1/embeddings needs of an Engine, beside
// Engine's own methods: [*inference.Engine] implements it. An Engine
// without it serves no embedding model, and New refuses a catalog with
// embedding entries. Its methods are called concurrently.
type Embedder interface {
	// PrepareEmbed checks req and tokenizes its inputs, encoding nothing:
	// its count is what rate limits reserve.
	PrepareEmbed(req inference.EmbedRequest) (*inference.PreparedEmbed, error)
	// RunEmbed encodes a prepared request; cancelling ctx abandons it.
	RunEmbed(ctx context.Context, p *inference.PreparedEmbed) (inference.EmbedResult, error)
}

// embeddings serves POST /v1/embeddings in OpenAI's shape: the request
// is parsed and checked (formats), its dimensions checked against the
// catalog entry, prepared by the engine (every input tokenized and
// bounded), admitted under the rate limits on its token count, and
// encoded.
//
// Vectors are L2-normalised. dimensions is accepted for an entry with
// MinDimensions (a model trained for truncation), from it to the model's
// size; for any other entry only the model's own size is.
func (h *Handler) embeddings(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	req, err := embeddings.Parse(body)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if slot, ok := r.Context().Value(identitySlotKey{}).(*Identity); ok {
		slot.EndUser = req.User
	}
	m, info, ok := h.embeddingModel(req.Request.Model)
	emb, can := h.engine.(Embedder)
	if !ok || !can {
		h.fail(w, r, formats.UnknownModel(req.Request.Model))
		return
	}
	if err := checkDimensions(m, info, req.Request.Dimensions); err != nil {
		h.fail(w, r, err)
		return
	}
	ir := req.Request
	ir.Model = m.ID
	p, err := emb.PrepareEmbed(ir)
	if err != nil {
		h.fail(w, r, embeddings.Error(err))
		return
	}
	a, err := h.reserve(w, r, m, int64(p.InputTokens), 0, 0) // input tokens only: nothing is generated
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := emb.RunEmbed(r.Context(), p)
	if a != nil {
		switch {
		case err == nil:
			a.settle(r, ratelimit.Usage{Requests: 1, InputTokens: int64(res.Usage.PromptTokens)})
		case r.Context().Err() != nil:
			// The client left mid-encoding: the inputs may have been
			// read already, so the count is charged.
			a.settle(r, ratelimit.Usage{Requests: 1, InputTokens: int64(p.InputTokens)})
		default:
			a.settle(r, ratelimit.Usage{})
		}
	}
	if err != nil {
		h.fail(w, r, embeddings.Error(err))
		return
	}
	h.writeJSON(w, r, embeddings.NewResponse(req, res))
}

// checkDimensions refuses dimensions that the catalog entry m does not
// allow: any but the model's own size without MinDimensions, else any
// outside MinDimensions to the model's size.
func checkDimensions(m catalog.Model, info inference.ModelInfo, d int) error {
	switch {
	case d == 0 || d == info.Dimensions:
		return nil
	case m.MinDimensions == 0:
		return &formats.RequestError{Param: "dimensions", Code: "invalid_value", Message: fmt.Sprintf(
			"dimensions: model %q was not trained for shorter vectors; leave dimensions out or set it to %d", m.ID, info.Dimensions)}
	case d < m.MinDimensions || d > info.Dimensions:
		return &formats.RequestError{Param: "dimensions", Code: "invalid_value", Message: fmt.Sprintf(
			"dimensions: %d; model %q takes %d to %d", d, m.ID, m.MinDimensions, info.Dimensions)}
	}
	return nil
}

// embeddingModel returns the catalog entry and the engine's description
// of the embedding model named name (an id or an alias).
func (h *Handler) embeddingModel(name string) (catalog.Model, inference.ModelInfo, bool) {
	m, ok := catalog.Lookup(h.models, name)
	if !ok || m.Kind != catalog.KindEmbedding {
		return catalog.Model{}, inference.ModelInfo{}, false
	}
	info, ok := served(h.engine.Models(), m.ID)
	return m, info, ok && info.Embedding
}

// embeddingObject is an embedding model's catalog object: the context
// one input may use and the length of its vectors.
func embeddingObject(m catalog.Model, info inference.ModelInfo) catalog.Object {
	o := m.Object(info.ContextLength)
	o.Dimensions = info.Dimensions
	return o
}

// checkEmbeddingModels reports an embedding entry of the catalog that the
// engine cannot serve: not an embedding model, or an engine that does not
// embed.
func (h *Handler) checkEmbeddingModels(infos []inference.ModelInfo) error {
	_, can := h.engine.(Embedder)
	return h.checkKind(infos, catalog.KindEmbedding, can, "httpapi.Embedder", func(m catalog.Model, info inference.ModelInfo) error {
		switch {
		case !info.Embedding:
			return fmt.Errorf("httpapi: catalog model %q is an embedding entry, and the engine's model is not an embedding model (its GGUF asks for no mean, cls or last pooling)", m.ID)
		case m.MinDimensions > info.Dimensions:
			return fmt.Errorf("httpapi: catalog model %q has MinDimensions %d, more than the model's %d", m.ID, m.MinDimensions, info.Dimensions)
		}
		return nil
	})
}
