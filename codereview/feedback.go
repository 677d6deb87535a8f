package codereview

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// ownerOf names who a request's reviews belong to: its account, or,
// without accounts, its key (by digest, never the key).
func ownerOf(st standing, planned bool, header http.Header) string {
	if planned {
		return "account:" + st.account
	}
	sum := sha256.Sum256([]byte(header.Get("Authorization") + header.Get("X-Api-Key")))
	return "key:" + hex.EncodeToString(sum[:8])
}

// feedbackBody is the body of POST /v1/code-review/reviews/{id}/feedback.
type feedbackBody struct {
	Comment  *int   `json:"comment"`
	Accepted *bool  `json:"accepted"`
	Note     string `json:"note"`
}

// feedback serves POST /v1/code-review/reviews/{id}/feedback: a
// comment of the caller's review accepted or dismissed, with a note. A
// dismissed comment, and a note, become a memory of the review's
// repository, which its later reviews read (plans with memories).
func (h *Handler) feedback(w http.ResponseWriter, r *http.Request) {
	header, ok := keyHeader(w, r)
	if !ok {
		return
	}
	var body feedbackBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Comment == nil || body.Accepted == nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "the body must be {comment: its index, accepted: true or false, note}")
		return
	}
	if len([]rune(body.Note)) > maxFeedbackNotes {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "note", fmt.Sprintf("is longer than %d characters", maxFeedbackNotes))
		return
	}
	st, planned, err := h.standingOf(r.Context(), header, h.now())
	if err != nil {
		admitError(w, err, h.now())
		return
	}
	owner := ownerOf(st, planned, header)
	n, err := h.ledger.feedback(r.Context(), owner, r.PathValue("id"), *body.Comment, *body.Accepted, body.Note)
	switch {
	case errors.Is(err, errNoReview):
		writeError(w, http.StatusNotFound, "not_found", "", fmt.Sprintf("no review %q of this account", r.PathValue("id")))
		return
	case errors.Is(err, errOutOfRange):
		writeError(w, http.StatusBadRequest, "invalid_request_error", "comment", fmt.Sprintf("the review has comments 0 to %d", n-1))
		return
	case err != nil:
		storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"review": r.PathValue("id"), "comment": *body.Comment, "accepted": *body.Accepted})
}

// fineTuning serves GET /v1/code-review/fine-tuning: the caller's
// accepted comments as a training set, one JSON object a line
// (application/jsonl), in the chat fine-tuning format: {"messages":
// [system, user (the piece of the diff the comment was written on),
// assistant ({"comments": [the comment]})]}. Plans with fine-tuning.
func (h *Handler) fineTuning(w http.ResponseWriter, r *http.Request) {
	header, ok := keyHeader(w, r)
	if !ok {
		return
	}
	now := h.now()
	st, planned, err := h.standingOf(r.Context(), header, now)
	if err == nil && planned {
		err = st.check([]ratelimit.Feature{policy.FeatureFineTuning})
	}
	if err != nil {
		admitError(w, err, now)
		return
	}
	reviews, err := h.ledger.reviews(r.Context(), ownerOf(st, planned, header))
	if err != nil {
		storeError(w, err)
		return
	}
	var b strings.Builder
	for _, k := range reviews {
		for i, c := range k.Comments {
			if i >= len(k.Feedback) || k.Feedback[i] != 1 || i >= len(k.Piece) || k.Piece[i] < 0 || k.Piece[i] >= len(k.Pieces) {
				continue // not accepted, or a document not written whole
			}
			answer, _ := json.Marshal(map[string]any{"comments": []Comment{c}})
			line, _ := json.Marshal(map[string]any{"messages": []map[string]string{
				{"role": "system", "content": k.System}, {"role": "user", "content": k.Pieces[k.Piece[i]]}, {"role": "assistant", "content": string(answer)}}})
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	w.Header().Set("Content-Type", "application/jsonl")
	w.Write([]byte(b.String()))
}

// storeError answers a request whose reviews' store failed: 503.
func storeError(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", "5")
	writeError(w, http.StatusServiceUnavailable, "server_error", "", "the reviews' store cannot be read: "+err.Error())
}
