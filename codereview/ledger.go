package codereview

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/ratelimit"
)

// How long a Handler's store keeps what it records: a review (for its
// comments' feedback and the fine-tuning set), a month's analytics, an
// owner's observations and a repository's memories, each from its last
// change.
const (
	reviewTTL      = 180 * 24 * time.Hour
	monthTTL       = 3 * 365 * 24 * time.Hour
	observationTTL = 90 * 24 * time.Hour
	memoryTTL      = 365 * 24 * time.Hour
)

// The bounds of what the store keeps per owner: the latest
// observations, and the latest memories of a repository.
const (
	maxObservations  = 200
	maxRepoMemories  = MaxMemories
	maxFeedbackNotes = 500
)

// kept is a finished review, for its comments' feedback.
type kept struct {
	Repository string    `json:"repository,omitzero"`
	Month      string    `json:"month"`  // when it was made, as ratelimit.Month
	System     string    `json:"system"` // the prompt its comments were written under
	Comments   []Comment `json:"comments"`
	// Pieces are the pieces of the diff the comments were written on,
	// and Piece each comment's (an index of Pieces): Comment.Excerpt,
	// which the comments' JSON leaves out, kept once per piece.
	Pieces []string `json:"pieces"`
	Piece  []int    `json:"piece"`
	// Feedback is per comment: 0 none, 1 accepted, -1 dismissed.
	Feedback []int8 `json:"feedback"`
	Created  int64  `json:"created"` // Unix seconds, for the export's order
}

// ledger keeps reviews, their analytics and observations, and
// repositories' memories in a Store, as documents under "codereview/"
// named by owner: replicas that share the Store (Redis) share them, and
// a durable Store (bbolt) keeps them across restarts. Each change is one
// atomic Update of one document. It is safe for concurrent use.
type ledger struct{ s account.Store }

// doc names a document of kind for owner, and the parts after it.
func doc(kind, owner string, parts ...string) string {
	var b strings.Builder
	b.WriteString("codereview/" + kind + "/" + url.PathEscape(owner))
	for _, p := range parts {
		b.WriteString("/" + url.PathEscape(p))
	}
	return b.String()
}

// update changes the JSON document key, of type T, by fn (its zero value
// when absent) in one Update; fn's error aborts it.
func update[T any](ctx context.Context, s account.Store, key string, ttl time.Duration, fn func(v *T) error) error {
	return s.Update(ctx, key, ttl, func(old []byte) ([]byte, error) {
		var v T
		if old != nil {
			if err := json.Unmarshal(old, &v); err != nil {
				return nil, fmt.Errorf("codereview: document %q: %w", key, err)
			}
		}
		if err := fn(&v); err != nil {
			return nil, err
		}
		return json.Marshal(v)
	})
}

// get reads the JSON document key into v; found is false when it is
// absent.
func get(ctx context.Context, s account.Store, key string, v any) (found bool, err error) {
	b, err := s.Get(ctx, key)
	if errors.Is(err, account.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("codereview: document %q: %w", key, err)
	}
	return true, nil
}

// observe records a request's observation and counts it in its owner's
// month; a finished review (k not nil) is kept for feedback.
func (l ledger) observe(ctx context.Context, owner string, o Observation, k *kept) error {
	month := ratelimit.Month(o.Created)
	err := update(ctx, l.s, doc("observations", owner), observationTTL, func(obs *[]Observation) error {
		*obs = append(*obs, o)
		*obs = (*obs)[max(0, len(*obs)-maxObservations):]
		return nil
	})
	if err != nil {
		return err
	}
	err = update(ctx, l.s, doc("month", owner, month), monthTTL, func(m *MonthStats) error {
		m.Month = month
		switch {
		case o.Error != "":
			m.Failed++
		case o.Kind == "review":
			m.Reviews++
			m.Comments += int64(o.Comments)
		default:
			m.Summaries++
		}
		return nil
	})
	if err != nil || k == nil {
		return err
	}
	k.Month, k.Created = month, o.Created.Unix()
	for _, c := range k.Comments {
		i := slices.Index(k.Pieces, c.Excerpt)
		if i < 0 {
			i = len(k.Pieces)
			k.Pieces = append(k.Pieces, c.Excerpt)
		}
		k.Piece = append(k.Piece, i)
	}
	k.Feedback = make([]int8, len(k.Comments))
	b, err := json.Marshal(k)
	if err != nil {
		return err
	}
	return l.s.Update(ctx, doc("review", owner, o.ID), reviewTTL, func([]byte) ([]byte, error) { return b, nil })
}

// errNoReview is feedback's error for a review that is not the owner's
// (or no longer kept).
var errNoReview = errors.New("codereview: no such review")

// feedback marks comment i of owner's review id accepted or dismissed,
// counts it in the review's month (a comment's feedback may change),
// and makes a memory of its repository of a dismissal or a note. It
// returns the review's comments, for a comment out of range; errNoReview
// for a review not found.
func (l ledger) feedback(ctx context.Context, owner, id string, i int, accepted bool, note string) (int, error) {
	var k kept
	var was int8
	n := 0
	err := update(ctx, l.s, doc("review", owner, id), reviewTTL, func(r *kept) error {
		if r.Month == "" {
			return errNoReview
		}
		if n = min(len(r.Comments), len(r.Feedback)); i < 0 || i >= n {
			return errOutOfRange
		}
		was = r.Feedback[i]
		r.Feedback[i] = map[bool]int8{true: 1, false: -1}[accepted]
		k = *r
		return nil
	})
	if errors.Is(err, errOutOfRange) {
		return n, err
	}
	if err != nil {
		return 0, err
	}
	err = update(ctx, l.s, doc("month", owner, k.Month), monthTTL, func(m *MonthStats) error {
		m.Month = k.Month
		switch was {
		case 1:
			m.Accepted--
		case -1:
			m.Dismissed--
		}
		if accepted {
			m.Accepted++
		} else {
			m.Dismissed++
		}
		return nil
	})
	if err != nil || k.Repository == "" {
		return n, err
	}
	c := k.Comments[i]
	var memory string
	switch {
	case !accepted && note != "":
		memory = fmt.Sprintf("A comment on %s (%q) was dismissed: %s", c.Path, clipText(c.Body, 200), note)
	case !accepted:
		memory = fmt.Sprintf("A comment on %s (%q) was dismissed.", c.Path, clipText(c.Body, 200))
	case note != "":
		memory = "Reviewers asked: " + note
	default:
		return n, nil
	}
	return n, update(ctx, l.s, doc("memories", owner, k.Repository), memoryTTL, func(m *[]string) error {
		*m = append(*m, memory)
		*m = (*m)[max(0, len(*m)-maxRepoMemories):]
		return nil
	})
}

// errOutOfRange is feedback's error for a comment the review lacks.
var errOutOfRange = errors.New("codereview: no such comment")

// memoriesOf returns what the reviewers of owner's repository said.
func (l ledger) memoriesOf(ctx context.Context, owner, repository string) ([]string, error) {
	if repository == "" {
		return nil, nil
	}
	var m []string
	_, err := get(ctx, l.s, doc("memories", owner, repository), &m)
	return m, err
}

// list reads the JSON documents whose names begin with prefix.
func list[T any](ctx context.Context, s account.Store, prefix string) ([]T, error) {
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	var out []T
	for _, key := range keys {
		var v T
		found, err := get(ctx, s, key, &v)
		if err != nil {
			return nil, err
		}
		if found { // not expired or deleted since List
			out = append(out, v)
		}
	}
	return out, nil
}

// reviews returns owner's kept reviews, the oldest first.
func (l ledger) reviews(ctx context.Context, owner string) ([]kept, error) {
	out, err := list[kept](ctx, l.s, doc("review", owner)+"/")
	slices.SortStableFunc(out, func(a, b kept) int { return cmp.Compare(a.Created, b.Created) })
	return out, err
}

// months returns owner's analytics by month, the latest first.
func (l ledger) months(ctx context.Context, owner string) ([]MonthStats, error) {
	out, err := list[MonthStats](ctx, l.s, doc("month", owner)+"/")
	slices.SortFunc(out, func(a, b MonthStats) int { return strings.Compare(b.Month, a.Month) })
	return out, err
}

// observations returns owner's latest observations, the latest first.
func (l ledger) observations(ctx context.Context, owner string) ([]Observation, error) {
	var obs []Observation
	_, err := get(ctx, l.s, doc("observations", owner), &obs)
	slices.Reverse(obs)
	return obs, err
}
