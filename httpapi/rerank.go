package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/rerank"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/ratelimit"
)

// Reranker is what POST /v1/rerank needs of an Engine to rank with a
// reranker model (a GGUF with rank pooling, such as a BERT-family
// cross-encoder), beside Engine's own methods: [*inference.Engine]
// implements it. Chat and decision models rank through decision.Engine
// instead. Its methods are called concurrently.
type Reranker interface {
	// Tokenize returns the tokens of text (inference.Literal) as the
	// model reads it: what admission counts.
	Tokenize(model, text string) ([]int, error)
	// Rank scores each document against the query.
	Rank(ctx context.Context, req inference.RankRequest) (inference.RankResult, error)
}

// POST /v1/rerank ranks documents against a query (package
// formats/rerank has the wire shape), with either kind of model:
//
//   - a reranker (a catalog entry of kind rerank, or a decision entry,
//     whose engine model is an encoder): Engine.Rank scores each (query,
//     document) pair in one sequence, and relevance_score is the
//     logistic sigmoid of the classifier head's output, in 0 to 1, in
//     the same order;
//   - a chat or decision entry on a generative model: each document is
//     a yes/no question (package decision) over the query, which is
//     decoded once, "is this document relevant to the query?", and
//     relevance_score is the probability of yes. Up to
//     decision.MaxQuestions documents share one decode of the query.
//
// Admission is that of the other routes, on the same path: the request
// is parsed and checked (a 400 naming the field), its tokens counted
// (for a reranker: the query's and each document's tokens, and
// rerankPairSpecials per pair, a document that does not fit the model's
// context with the query being a 400 naming it; for a chat model: the
// decision prompts' tokens), reserved as input tokens with no output at
// the entry's prices, and settled with the tokens the model read.

// rerankPairSpecials is the margin per (query, document) pair of a
// reranker's count: the special tokens around and between the two
// ([CLS] q [SEP] d [SEP], or <s> q </s></s> d </s>).
const rerankPairSpecials = 4

// rankChunk is the most documents of one Engine.Rank call
// (inference.RankRequest takes 1 to 256).
const rankChunk = 256

// rerankModel returns the catalog entry and the engine's description of
// the model name names (an id or an alias) that can rank: a rerank entry
// on an encoder, a chat entry on a generative model, or a decision entry
// on either.
func (h *Handler) rerankModel(name string) (catalog.Model, inference.ModelInfo, bool) {
	m, ok := catalog.Lookup(h.models, name)
	if !ok {
		return catalog.Model{}, inference.ModelInfo{}, false
	}
	info, ok := served(h.engine.Models(), m.ID)
	switch {
	case !ok || info.Embedding:
		return catalog.Model{}, inference.ModelInfo{}, false
	case m.Kind == catalog.KindRerank:
		return m, info, info.Encoder
	case isChat(m):
		return m, info, !info.Encoder
	}
	return m, info, m.Kind == catalog.KindDecision
}

// rerank serves POST /v1/rerank.
func (h *Handler) rerank(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	req, err := rerank.Parse(body)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	m, info, ok := h.rerankModel(req.Model)
	if !ok {
		h.fail(w, r, formats.UnknownModel(req.Model))
		return
	}
	var scores []float64
	var read int
	if info.Encoder {
		scores, read, err = h.rankEncoder(w, r, req, m, info)
	} else {
		scores, read, err = h.rankDecision(w, r, req, m, info)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, r, rerank.NewResponse(req, scores, read))
}

// rankEncoder ranks req's documents with reranker m: the scores, and the
// tokens it read.
func (h *Handler) rankEncoder(w http.ResponseWriter, r *http.Request, req rerank.Canonical, m catalog.Model, info inference.ModelInfo) ([]float64, int, error) {
	rk, ok := h.engine.(Reranker)
	if !ok {
		return nil, 0, formats.UnknownModel(req.Model)
	}
	query, err := rk.Tokenize(m.ID, inference.Literal(req.Query))
	if err != nil {
		return nil, 0, err
	}
	var inputs int64
	for i, d := range req.Documents {
		toks, err := rk.Tokenize(m.ID, inference.Literal(d))
		if err != nil {
			return nil, 0, err
		}
		n := len(query) + len(toks) + rerankPairSpecials
		if info.ContextLength > 0 && n > info.ContextLength {
			return nil, 0, &formats.RequestError{Param: fmt.Sprintf("documents[%d]", i), Code: "context_length_exceeded", Message: fmt.Sprintf(
				"documents[%d]: with the query, %d tokens, more than model %q reads at once (%d)", i, n, m.ID, info.ContextLength)}
		}
		inputs += int64(n)
	}
	a, err := h.reserve(w, r, m, inputs, 0, 0)
	if err != nil {
		return nil, 0, err
	}
	var scores []float64
	read := 0
	for start := 0; start < len(req.Documents) && err == nil; start += rankChunk {
		var res inference.RankResult
		res, err = rk.Rank(r.Context(), inference.RankRequest{Model: m.ID, Query: req.Query, Documents: req.Documents[start:min(start+rankChunk, len(req.Documents))]})
		read += res.Usage.PromptTokens
		for _, s := range res.Scores {
			scores = append(scores, 1/(1+math.Exp(-s)))
		}
	}
	h.settleRead(r, a, err, read, inputs)
	if errors.Is(err, inference.ErrContextLength) {
		err = &formats.RequestError{Param: "documents", Code: "context_length_exceeded", Message: "documents: a document and the query exceed the model's context length"}
	}
	return scores, read, err
}

// settleRead settles a rerank's admission: with the tokens read on
// success, with the whole count when the client left midway (the model
// may have read them), and with nothing after an engine's error.
func (h *Handler) settleRead(r *http.Request, a *admission, err error, read int, counted int64) {
	switch {
	case a == nil:
	case err == nil:
		a.settle(r, ratelimit.Usage{Requests: 1, InputTokens: int64(read)})
	case r.Context().Err() != nil:
		a.settle(r, ratelimit.Usage{Requests: 1, InputTokens: counted})
	default:
		a.settle(r, ratelimit.Usage{})
	}
}

// rerankQuestion is what a chat model is asked of each document.
const rerankQuestion = "Is the document below relevant to the query above: does it help answer it?\n\nDocument:\n"

// rankDecision ranks req's documents with the generative model of chat
// or decision entry m, one yes/no question per document: the scores,
// and the tokens it read.
func (h *Handler) rankDecision(w http.ResponseWriter, r *http.Request, req rerank.Canonical, m catalog.Model, info inference.ModelInfo) ([]float64, int, error) {
	eng, ok := h.engine.(decision.Engine)
	if !ok {
		return nil, 0, formats.UnknownModel(req.Model)
	}
	ev, err := h.evaluator(eng, m, info)
	if err != nil {
		return nil, 0, err
	}
	var prepared []*decision.Prepared
	var inputs int64
	for start := 0; start < len(req.Documents); start += decision.MaxQuestions {
		dr := decision.Request{Model: m.ID, State: "Query:\n" + req.Query, Questions: map[string]decision.Question{}}
		for i, d := range req.Documents[start:min(start+decision.MaxQuestions, len(req.Documents))] {
			dr.Questions[questionID(start+i)] = decision.Question{Type: decision.TypeNoul, Instructions: rerankQuestion + d,
				Yes: "the document is relevant to the query", No: "the document is not relevant to the query"}
		}
		p, err := ev.Prepare(dr)
		if err != nil {
			return nil, 0, rerankDecisionError(err)
		}
		prepared = append(prepared, p)
		inputs += int64(p.InputTokens)
	}
	a, err := h.reserve(w, r, m, inputs, 0, 0)
	if err != nil {
		return nil, 0, err
	}
	scores := make([]float64, len(req.Documents))
	read := 0
	for _, p := range prepared {
		var res decision.Response
		if res, err = ev.Run(r.Context(), p); err != nil {
			break
		}
		read += res.Usage.InputTokens
		for id, ans := range res.Answers {
			if i, ok := questionIndex(id); ok && ans.Noul != nil && i < len(scores) {
				scores[i] = *ans.Noul
			}
		}
	}
	h.settleRead(r, a, err, read, inputs)
	if err != nil {
		return nil, 0, rerankDecisionError(err)
	}
	return scores, read, nil
}

// questionID is the decision question of document i; questionIndex
// reads it back.
func questionID(i int) string { return "d" + strconv.Itoa(i) }

func questionIndex(id string) (int, bool) {
	i, err := strconv.Atoi(strings.TrimPrefix(id, "d"))
	return i, err == nil && strings.HasPrefix(id, "d")
}

// rerankDecisionError names the rerank field of a decision's failure:
// the state is the query, a question a document.
func rerankDecisionError(err error) error {
	var de *decision.Error
	switch {
	case errors.As(err, &de) && len(de.Loc) >= 2 && de.Loc[0] == "questions":
		id, _ := de.Loc[1].(string)
		if i, ok := questionIndex(id); ok {
			p := fmt.Sprintf("documents[%d]", i)
			return &formats.RequestError{Param: p, Message: p + ": " + de.Message}
		}
	case errors.As(err, &de) && de.Param == "state":
		return &formats.RequestError{Param: "query", Message: "query: " + de.Message}
	case errors.Is(err, inference.ErrContextLength):
		return &formats.RequestError{Param: "documents", Code: "context_length_exceeded", Message: "documents: the query and a document exceed the model's context length"}
	}
	return err
}

// checkRerankModels reports a rerank entry of the catalog that the
// engine cannot serve: not a reranker, or an engine that does not rank.
func (h *Handler) checkRerankModels(infos []inference.ModelInfo) error {
	_, can := h.engine.(Reranker)
	return h.checkKind(infos, catalog.KindRerank, can, "httpapi.Reranker", func(m catalog.Model, info inference.ModelInfo) error {
		if !info.Encoder {
			return fmt.Errorf("httpapi: catalog model %q is a rerank entry, and the engine's model is not a reranker (its GGUF asks for no rank pooling)", m.ID)
		}
		return nil
	})
}

// checkKind reports an entry of kind in the catalog that the engine does
// not serve, or serves with an engine that lacks the interface iface
// (can false), or whose model check refuses.
func (h *Handler) checkKind(infos []inference.ModelInfo, kind catalog.Kind, can bool, iface string, check func(catalog.Model, inference.ModelInfo) error) error {
	for _, m := range h.models {
		if m.Kind != kind {
			continue
		}
		info, ok := served(infos, m.ID)
		switch {
		case !ok:
			return fmt.Errorf("httpapi: catalog model %q is not served by the engine", m.ID)
		case !can:
			return fmt.Errorf("httpapi: the catalog has %s models, and the engine does not implement %s", kind, iface)
		}
		if err := check(m, info); err != nil {
			return err
		}
	}
	return nil
}
