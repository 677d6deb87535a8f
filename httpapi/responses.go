package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
)

// ErrNotFound is what a ResponseStore returns for a response it does not
// hold (never stored, expired, evicted, deleted, or another key's).
var ErrNotFound = errors.New("httpapi: response not found")

// ResponseStore keeps the responses of POST /v1/responses with store
// true (the default), for GET and DELETE /v1/responses/{id} and for
// previous_response_id. Every call names the owner, the KeyID of the
// request's key: a store must never return or delete a response for
// another owner than the one that put it. Implementations must be safe for
// concurrent use. MemoryStore is the in-memory one; package cache holds
// durable ones.
type ResponseStore interface {
	// Get returns the response id of owner, or an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, owner, id string) (StoredResponse, error)
	// Put stores r under owner and r.Response.ID, replacing any entry of
	// that id.
	Put(ctx context.Context, owner string, r StoredResponse) error
	// Delete removes the response id of owner, or returns an error
	// wrapping ErrNotFound.
	Delete(ctx context.Context, owner, id string) error
}

// StoredResponse is what a ResponseStore keeps of one response. Its
// values are shared with the store: do not modify them.
type StoredResponse struct {
	// Response is the object GET /v1/responses/{id} returns.
	Response formats.Response
	// Transcript is the conversation that previous_response_id
	// continues: the request's messages, without its instructions, and
	// the reply (see formats.Request.Transcript).
	Transcript []inference.Message
}

// responseDeleted is the body of DELETE /v1/responses/{id}.
type responseDeleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // response.deleted
	Deleted bool   `json:"deleted"`
}

// owner returns the KeyID of the request's key.
func owner(r *http.Request) string {
	id, _ := IdentityFrom(r.Context())
	return id.KeyID
}

// responses serves POST /v1/responses.
func (h *Handler) responses(w http.ResponseWriter, r *http.Request) {
	req, err := h.parse(r, formats.ParseResponsesRequest)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if req.PreviousResponseID != "" {
		prev, err := h.store.Get(r.Context(), owner(r), req.PreviousResponseID)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				err = &formats.Error{Status: http.StatusNotFound, Code: "previous_response_not_found", Param: "previous_response_id",
					Message: fmt.Sprintf("previous response with id %q not found", req.PreviousResponseID), Err: err}
			}
			h.fail(w, r, err)
			return
		}
		req = formats.Continue(prev.Transcript, req)
	}
	if req.Stream {
		sw := newSSEWriter(w)
		enc := formats.NewResponsesStream(sw, req, h.opts)
		h.stream(sw, r, req, enc, func(res inference.Result) {
			h.keep(r, req, enc.Response(), res)
		})
		return
	}
	res, ok := h.complete(w, r, req)
	if !ok {
		return
	}
	resp := formats.NewResponse(req, res, h.opts)
	h.keep(r, req, resp, res)
	h.writeJSON(w, r, resp)
}

// keep stores a finished response when its request asks to. A failure to
// store is logged: the client still gets its response.
func (h *Handler) keep(r *http.Request, req formats.Request, resp formats.Response, res inference.Result) {
	if !req.Store {
		return
	}
	err := h.store.Put(r.Context(), owner(r), StoredResponse{Response: resp, Transcript: req.Transcript(res)})
	if err != nil {
		h.log.LogAttrs(r.Context(), slog.LevelWarn, "httpapi: storing a response failed",
			slog.String("response_id", resp.ID), slog.Any("err", err))
	}
}

// notFound is the error of an unknown response id.
func notFound(id string, err error) error {
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	return &formats.Error{Status: http.StatusNotFound, Code: "not_found",
		Message: fmt.Sprintf("response with id %q not found", id), Err: err}
}

// getResponse serves GET /v1/responses/{id}.
func (h *Handler) getResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	stored, err := h.store.Get(r.Context(), owner(r), id)
	if err != nil {
		h.fail(w, r, notFound(id, err))
		return
	}
	h.writeJSON(w, r, stored.Response)
}

// deleteResponse serves DELETE /v1/responses/{id}.
func (h *Handler) deleteResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := h.store.Delete(r.Context(), owner(r), id); err != nil {
		h.fail(w, r, notFound(id, err))
		return
	}
	h.writeJSON(w, r, responseDeleted{ID: id, Object: "response.deleted", Deleted: true})
}
