package httpapi

import (
	"errors"
	"fmt"
	"iter"
	"net/http"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/completions"
	"github.com/inferkit/inferkit/inference"
)

// completions serves POST /v1/completions, OpenAI's legacy text
// completions: each prompt continued as it is, without a chat template.
// Every prompt is prepared before any is admitted, and the request is
// admitted once, on all their tokens; the prompts then run one after
// the other, each with its n choices, whose indexes follow the prompts.
func (h *Handler) completions(w http.ResponseWriter, r *http.Request) {
	req, err := h.parse(r, completions.Parse)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	g, err := h.admitPrompts(w, r, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Stream {
		sw := newSSEWriter(w)
		h.stream(sw, r, g, completions.NewStream(sw, req, h.opts), nil)
		return
	}
	results, ok := h.complete(w, r, g)
	if !ok {
		return
	}
	n := choicesOf(g.p.Request)
	byPrompt := make([][]inference.Result, len(req.Prompts))
	for i := range byPrompt {
		byPrompt[i] = results[i*n : (i+1)*n]
	}
	h.writeJSON(w, r, completions.NewResponse(req, byPrompt, h.opts))
}

// admitPrompts prepares every prompt of a legacy completions request and
// admits them as one request: their prompt tokens, and the output tokens
// of every choice of each.
func (h *Handler) admitPrompts(w http.ResponseWriter, r *http.Request, req formats.Request) (*generation, error) {
	var (
		m        catalog.Model
		prepared = make([]*inference.Prepared, len(req.Prompts))
		inputs   int64
		outputs  int64
		err      error
	)
	for i := range req.Prompts {
		if m, prepared[i], err = h.prepare(r, req.Model, completions.ForPrompt(req, i)); err != nil {
			return nil, promptError(err, i, len(req.Prompts))
		}
		in, out := reservation(prepared[i])
		inputs, outputs = inputs+in, outputs+out
	}
	// What settles the request: every prompt's tokens, under the first's
	// request (the prompts differ in their text only).
	all := &inference.Prepared{Request: prepared[0].Request, InputTokens: int(inputs)}
	a, err := h.reserve(w, r, m, inputs, outputs, 0)
	if err != nil {
		return nil, err
	}
	n := choicesOf(all.Request)
	return &generation{p: all, a: a, choices: n * len(prepared), events: h.runPrompts(r, prepared, n)}, nil
}

// runPrompts runs the prepared prompts one after the other, as one
// stream whose choice indexes follow the prompts: choice j of prompt i is
// i*n+j.
func (h *Handler) runPrompts(r *http.Request, prepared []*inference.Prepared, n int) iter.Seq2[inference.Event, error] {
	return func(yield func(inference.Event, error) bool) {
		for i, p := range prepared {
			for ev, err := range h.engine.Run(r.Context(), p) {
				ev.Choice += i * n
				if !yield(ev, err) || err != nil {
					return
				}
			}
		}
	}
}

// promptError says which prompt of several an engine's error is about.
func promptError(err error, i, prompts int) error {
	var fe *inference.FieldError
	if prompts == 1 || !errors.As(err, &fe) {
		return err
	}
	return &inference.FieldError{Path: fe.Path, Reason: fmt.Sprintf("prompt[%d]: %s", i, fe.Reason), Err: fe.Err}
}
