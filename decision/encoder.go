package decision

import (
	"context"
	"fmt"
	"slices"

	"github.com/inferkit/inferkit/inference"
)

// Ranker is what an Evaluator needs of an engine to run an encoder model (a
// reranker or classifier GGUF); [*inference.Engine] implements it. When
// Config.Engine implements Ranker and its Models reports Config.Model as an
// encoder (ModelInfo.Encoder), Evaluate ranks instead of scoring tokens.
type Ranker interface {
	// Rank scores documents against a query with an encoder model.
	Rank(ctx context.Context, req inference.RankRequest) (inference.RankResult, error)
	// Models describes the engine's models.
	Models() []inference.ModelInfo
}

// maxRankDocuments is the most documents one Rank call takes.
const maxRankDocuments = 256

// encoderModel returns the engine as a Ranker when cfg.Model is one of its
// encoder models.
func encoderModel(cfg Config) (Ranker, bool) {
	r, ok := cfg.Engine.(Ranker)
	if !ok {
		return nil, false
	}
	info, ok := infoOf(r.Models(), cfg.Model)
	return r, ok && info.Encoder
}

// infoOf finds the model that name names among infos.
func infoOf(infos []inference.ModelInfo, name string) (inference.ModelInfo, bool) {
	for _, info := range infos {
		if info.ID == name || slices.Contains(info.Aliases, name) {
			return info, true
		}
	}
	return inference.ModelInfo{}, false
}

// optionTexts are the documents an encoder scores against the state, one
// per option of q, in the order of its probabilities: a choice's options
// as "name: description" (the name alone without a description), a
// score's labels (after the instructions, when given), and for a noul the
// statement of the instructions and its negation, each with what the
// request says it means.
func optionTexts(q Question) []string {
	var docs []string
	switch q.Type {
	case TypeChoice:
		for _, o := range q.Options {
			d := o.Name
			if o.Description != "" {
				d += ": " + o.Description
			}
			docs = append(docs, withInstructions(q.Instructions, d))
		}
	case TypeScore:
		for i, l := range q.Labels {
			docs = append(docs, withInstructions(q.Instructions, orDefault(l, fmt.Sprintf("Level %d", i))))
		}
	case TypeNoul:
		s := orDefault(q.Instructions, "The statement is true of the state.")
		docs = append(docs, withMeaning("Yes: "+s, q.Yes), withMeaning("No, it is not the case: "+s, q.No))
	}
	return docs
}

// withMeaning adds to a noul's answer what the request says it means.
func withMeaning(doc, meaning string) string {
	if meaning == "" {
		return doc
	}
	return doc + "\n" + meaning
}

func withInstructions(instructions, doc string) string {
	if instructions == "" {
		return doc
	}
	return instructions + "\n" + doc
}

// rank answers req with an encoder: every (state, option text) pair is
// one sequence, all of them in as few Rank calls (and batches) as the
// engine allows; a softmax over each question's scores, at the
// temperature, gives its probabilities. Answers carry no OptionMass.
func (e *Evaluator) rank(ctx context.Context, r Ranker, req Request) (Response, error) {
	names := sortedNames(req.Questions)
	var docs []string
	spans := make([][2]int, len(names))
	for i, name := range names {
		start := len(docs)
		docs = append(docs, optionTexts(req.Questions[name])...)
		spans[i] = [2]int{start, len(docs)}
	}
	scores := make([]float64, 0, len(docs))
	out := Response{Model: req.Model, Answers: map[string]Answer{}}
	for i := 0; i < len(docs); i += maxRankDocuments {
		res, err := r.Rank(ctx, inference.RankRequest{Model: e.cfg.Model, Query: req.State, Documents: docs[i:min(i+maxRankDocuments, len(docs))]})
		if err != nil {
			return Response{}, fmt.Errorf("decision: %w", err)
		}
		scores = append(scores, res.Scores...)
		out.Usage.InputTokens += res.Usage.PromptTokens
	}
	if len(scores) != len(docs) {
		return Response{}, fmt.Errorf("decision: the engine gave %d scores for %d options", len(scores), len(docs))
	}
	for i, name := range names {
		s := scores[spans[i][0]:spans[i][1]]
		out.Answers[name] = answer(req.Questions[name], distribution(s, e.cfg.Temperature), -1)
	}
	return out, nil
}
