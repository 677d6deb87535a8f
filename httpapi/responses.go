package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/inferkit/inferkit/cache"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/responses"
	"github.com/inferkit/inferkit/inference"
)

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
	req, err := h.parse(r, responses.Parse)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if req.PreviousResponseID != "" {
		prev, err := h.store.Get(r.Context(), owner(r), req.PreviousResponseID)
		if errors.Is(err, cache.ErrNotFound) {
			err = &formats.Error{Status: http.StatusNotFound, Code: "previous_response_not_found", Param: "previous_response_id",
				Message: fmt.Sprintf("previous response with id %q not found", req.PreviousResponseID), Err: err}
		}
		var history []inference.Message
		if err == nil {
			history, err = decodeTranscript(prev.Transcript)
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		req = formats.Continue(history, req)
	}
	g, err := h.admit(w, r, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Stream {
		sw := newSSEWriter(w)
		enc := responses.NewStream(sw, req, h.opts)
		h.stream(sw, r, g, enc, func(res inference.Result) {
			h.keep(r, req, enc.Response(), res)
		})
		return
	}
	results, ok := h.complete(w, r, g)
	if !ok {
		return
	}
	res := results[0]
	resp := responses.NewResponse(req, res, h.opts)
	h.keep(r, req, resp, res)
	h.writeJSON(w, r, resp)
}

// keep stores a finished response when its request asks to. A failure to
// store is logged: the client still gets its response. The store is not
// cancelled with the request: the response is complete.
func (h *Handler) keep(r *http.Request, req formats.Request, resp responses.Response, res inference.Result) {
	if !req.Store {
		return
	}
	rec, err := newRecord(owner(r), resp, req.Transcript(res))
	if err == nil {
		err = h.store.Put(context.WithoutCancel(r.Context()), rec)
	}
	if err != nil {
		h.log.LogAttrs(r.Context(), slog.LevelWarn, "httpapi: storing a response failed",
			slog.String("response_id", resp.ID), slog.Any("err", err))
	}
}

// newRecord encodes a response and its transcript into the record that
// the store keeps: the response as the JSON that GET returns, the
// transcript in storedTranscript's schema.
func newRecord(owner string, resp responses.Response, transcript []inference.Message) (cache.Record, error) {
	body, err := json.Marshal(resp)
	if err != nil {
		return cache.Record{}, fmt.Errorf("httpapi: encoding response %s: %w", resp.ID, err)
	}
	t := storedTranscript{Version: transcriptVersion, Messages: make([]storedMessage, len(transcript))}
	for i, m := range transcript {
		sm := storedMessage{Role: string(m.Role), Reasoning: m.Reasoning, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, p := range m.Content {
			sm.Content = append(sm.Content, storedPart(p))
		}
		for _, c := range m.ToolCalls {
			sm.ToolCalls = append(sm.ToolCalls, storedToolCall(c))
		}
		t.Messages[i] = sm
	}
	tb, err := json.Marshal(t)
	if err != nil {
		return cache.Record{}, fmt.Errorf("httpapi: encoding the transcript of %s: %w", resp.ID, err)
	}
	return cache.Record{Owner: owner, ID: resp.ID, Response: body, Transcript: tb}, nil
}

// transcriptVersion is the version of storedTranscript's schema.
const transcriptVersion = 1

// storedTranscript is how a transcript is stored: a schema of this
// package's own rather than inference.Message's field names, so that
// records kept by a durable store still read after those types change.
type storedTranscript struct {
	Version  int             `json:"v"`
	Messages []storedMessage `json:"messages"`
}

// storedMessage is an inference.Message.
type storedMessage struct {
	Role       string           `json:"role"`
	Content    []storedPart     `json:"content,omitzero"`
	Reasoning  string           `json:"reasoning,omitzero"`
	ToolCalls  []storedToolCall `json:"tool_calls,omitzero"`
	ToolCallID string           `json:"tool_call_id,omitzero"`
	Name       string           `json:"name,omitzero"`
}

// storedPart is an inference.Part.
type storedPart struct {
	Text  string `json:"text,omitzero"`
	Image []byte `json:"image,omitzero"`
	// URL names an image by URL, fetched again by the next turn.
	URL string `json:"url,omitzero"`
}

// storedToolCall is an inference.ToolCall.
type storedToolCall struct {
	ID        string `json:"id,omitzero"`
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitzero"`
}

// decodeTranscript decodes a record's transcript.
func decodeTranscript(b []byte) ([]inference.Message, error) {
	var t storedTranscript
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("httpapi: decoding a stored transcript: %w", err)
	}
	if t.Version != transcriptVersion {
		return nil, fmt.Errorf("httpapi: a stored transcript has version %d, not %d", t.Version, transcriptVersion)
	}
	msgs := make([]inference.Message, len(t.Messages))
	for i, sm := range t.Messages {
		m := inference.Message{Role: inference.Role(sm.Role), Reasoning: sm.Reasoning, ToolCallID: sm.ToolCallID, Name: sm.Name}
		for _, p := range sm.Content {
			m.Content = append(m.Content, inference.Part(p))
		}
		for _, c := range sm.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, inference.ToolCall(c))
		}
		msgs[i] = m
	}
	return msgs, nil
}

// notFound is the error of an unknown response id.
func notFound(id string, err error) error {
	if !errors.Is(err, cache.ErrNotFound) {
		return err
	}
	return &formats.Error{Status: http.StatusNotFound, Code: "not_found",
		Message: fmt.Sprintf("response with id %q not found", id), Err: err}
}

// getResponse serves GET /v1/responses/{id}.
func (h *Handler) getResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rec, err := h.store.Get(r.Context(), owner(r), id)
	if err != nil {
		h.fail(w, r, notFound(id, err))
		return
	}
	// The object as it was sent when it was made.
	h.writeJSON(w, r, json.RawMessage(rec.Response))
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
