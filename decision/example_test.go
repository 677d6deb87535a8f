//go:build cgo

package decision_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

func Example() {
	// A tiny model with random weights stands in for a real chat GGUF: its
	// answers are arbitrary, their shape is not.
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")
	if err := inferencetest.WriteModel(path, inferencetest.Options{}); err != nil {
		log.Fatal(err)
	}
	e, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "judge", Path: path}}, Threads: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	ev, err := decision.New(decision.Config{Engine: e, Model: "judge"})
	if err != nil {
		log.Fatal(err)
	}
	res, err := ev.Evaluate(context.Background(), decision.Request{
		Model: "judge",
		State: "The parcel arrived two weeks late and the box was crushed.",
		Questions: map[string]decision.Question{
			"sentiment": {Type: "choice", Options: []decision.Option{
				{Name: "positive", Description: "The customer is pleased."},
				{Name: "negative", Description: "The customer is unhappy."},
			}},
			"refund": {Type: "noul", Instructions: "Does the customer deserve a refund?"},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	s := res.Answers["sentiment"]
	fmt.Println(s.Type, len(s.Probabilities), s.Choice == "positive" || s.Choice == "negative")
	r := res.Answers["refund"]
	fmt.Println(r.Type, *r.Noul >= 0 && *r.Noul <= 1, res.Usage.InputTokens > 0, res.Usage.OutputTokens)
	// Output:
	// choice 2 true
	// noul true true 0
}
