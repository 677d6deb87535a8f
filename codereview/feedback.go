package codereview

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// The bounds of a Handler's memory of reviews: the reviews kept for
// feedback and fine-tuning (the oldest forgotten first), and the
// memories kept per repository (the latest).
const (
	maxKept          = 10000
	maxRepoMemories  = MaxMemories
	maxFeedbackNotes = 500
)

// kept is a finished review, for its comments' feedback.
type kept struct {
	owner, repository string
	month             string // when it was made, as ratelimit.Month
	system            string // the prompt its comments were written under
	comments          []Comment
	feedback          []int8 // per comment: 0 none, 1 accepted, -1 dismissed
}

// ledger keeps reviews, their analytics and observations, and
// repositories' memories in memory: what one process saw. It is safe
// for concurrent use.
type ledger struct {
	mu       sync.Mutex
	reviews  map[string]*kept
	order    []string
	memories map[string][]string // by owner and repository
	// months are each owner's analytics by month; observations each
	// owner's latest reviews, the oldest first.
	months       map[string]map[string]*MonthStats
	observations map[string][]Observation
}

func newLedger() *ledger {
	return &ledger{reviews: map[string]*kept{}, memories: map[string][]string{},
		months: map[string]map[string]*MonthStats{}, observations: map[string][]Observation{}}
}

// maxObservations is how many of an owner's latest reviews the ledger
// observes; maxMonths how many months of analytics it keeps per owner.
const (
	maxObservations = 200
	maxMonths       = 36
)

// observe records a request's observation and counts it in its
// owner's month; a finished review (k not nil) is kept for feedback.
func (l *ledger) observe(owner string, o Observation, k *kept) {
	l.mu.Lock()
	defer l.mu.Unlock()
	obs := append(l.observations[owner], o)
	l.observations[owner] = obs[max(0, len(obs)-maxObservations):]
	m := l.month(owner, ratelimit.Month(o.Created))
	switch {
	case o.Error != "":
		m.Failed++
	case o.Kind == "review":
		m.Reviews++
		m.Comments += int64(o.Comments)
	default:
		m.Summaries++
	}
	if k == nil {
		return
	}
	k.owner, k.month = owner, m.Month
	k.feedback = make([]int8, len(k.comments))
	l.reviews[o.ID] = k
	l.order = append(l.order, o.ID)
	if len(l.order) > maxKept {
		delete(l.reviews, l.order[0])
		l.order = l.order[1:]
	}
}

// month returns owner's analytics of month, made if need be; l.mu is
// held.
func (l *ledger) month(owner, month string) *MonthStats {
	ms := l.months[owner]
	if ms == nil {
		ms = map[string]*MonthStats{}
		l.months[owner] = ms
	}
	m := ms[month]
	if m == nil {
		m = &MonthStats{Month: month}
		ms[month] = m
		if len(ms) > maxMonths {
			delete(ms, slices.Min(slices.Collect(maps.Keys(ms))))
		}
	}
	return m
}

// memoriesOf returns what the reviewers of owner's repository said.
func (l *ledger) memoriesOf(owner, repository string) []string {
	if repository == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.memories[owner+"\x00"+repository]...)
}

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
	l := h.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.reviews[r.PathValue("id")]
	switch {
	case k == nil || k.owner != owner:
		writeError(w, http.StatusNotFound, "not_found", "", fmt.Sprintf("no review %q of this account", r.PathValue("id")))
		return
	case *body.Comment < 0 || *body.Comment >= len(k.comments):
		writeError(w, http.StatusBadRequest, "invalid_request_error", "comment", fmt.Sprintf("the review has comments 0 to %d", len(k.comments)-1))
		return
	}
	c := k.comments[*body.Comment]
	m := l.month(owner, k.month)
	switch k.feedback[*body.Comment] { // a comment's feedback may change
	case 1:
		m.Accepted--
	case -1:
		m.Dismissed--
	}
	if *body.Accepted {
		m.Accepted++
	} else {
		m.Dismissed++
	}
	k.feedback[*body.Comment] = map[bool]int8{true: 1, false: -1}[*body.Accepted]
	if k.repository != "" {
		var memory string
		switch {
		case !*body.Accepted && body.Note != "":
			memory = fmt.Sprintf("A comment on %s (%q) was dismissed: %s", c.Path, clipText(c.Body, 200), body.Note)
		case !*body.Accepted:
			memory = fmt.Sprintf("A comment on %s (%q) was dismissed.", c.Path, clipText(c.Body, 200))
		case body.Note != "":
			memory = "Reviewers asked: " + body.Note
		}
		if memory != "" {
			key := owner + "\x00" + k.repository
			m := append(l.memories[key], memory)
			l.memories[key] = m[max(0, len(m)-maxRepoMemories):]
		}
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
	owner := ownerOf(st, planned, header)
	var b strings.Builder
	l := h.ledger
	l.mu.Lock()
	for _, id := range l.order {
		k := l.reviews[id]
		if k.owner != owner {
			continue
		}
		for i, c := range k.comments {
			if k.feedback[i] != 1 {
				continue
			}
			answer, _ := json.Marshal(map[string]any{"comments": []Comment{c}})
			line, _ := json.Marshal(map[string]any{"messages": []map[string]string{
				{"role": "system", "content": k.system}, {"role": "user", "content": c.Excerpt}, {"role": "assistant", "content": string(answer)}}})
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	l.mu.Unlock()
	w.Header().Set("Content-Type", "application/jsonl")
	w.Write([]byte(b.String()))
}
