package completions

import (
	"bytes"
	"errors"
	"testing"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/inference"
)

func TestGolden(t *testing.T) {
	req := formatstest.Parse(t, Parse, `{"model":"core-2-5-mini","prompt":["Hi","One"],"max_tokens":4,"echo":true,"logprobs":2,"stream_options":{"include_usage":true}}`)
	if len(req.Prompts) != 2 || !req.Echo || !req.Logprobs || !req.PromptLogprobs || req.TopLogprobs != 2 || req.MaxTokens != 4 {
		t.Fatalf("parsed %+v", req)
	}
	one := formatstest.Logprobs()
	one.PromptLogprobs = []inference.TokenLogprob{
		{Token: 1, Bytes: nil}, // a BOS: no text, left out
		{Token: 13, Bytes: []byte("Hi"), Logprob: -4, Top: []inference.TopLogprob{{Token: 14, Bytes: []byte("Hello"), Logprob: -1}}},
	}
	two := formatstest.StopSeq()
	two.PromptLogprobs = []inference.TokenLogprob{{Token: 5, Bytes: []byte("One")}}
	formatstest.Golden(t, "completion.json", formatstest.JSON(t, NewResponse(req, [][]inference.Result{{one}, {two}}, formatstest.Options())))

	var b bytes.Buffer
	formatstest.Stream(t, NewStream(&b, req, formatstest.Options()), []inference.Event{
		{Choice: 0, Text: "Hi", Logprobs: one.Logprobs[:1], PromptLogprobs: one.PromptLogprobs},
		{Choice: 0, Final: &one},
		{Choice: 1, Text: "One", PromptLogprobs: two.PromptLogprobs},
		{Choice: 1, Final: &two},
	}, nil)
	formatstest.Golden(t, "completion_stream.sse", b.Bytes())

	b.Reset()
	plain := formatstest.Parse(t, Parse, `{"model":"m","prompt":"Hi","n":2,"stream":true}`)
	formatstest.Stream(t, NewStream(&b, plain, formatstest.Options()), []inference.Event{{Choice: 1, Text: "x"}}, inference.ErrOverloaded)
	formatstest.Golden(t, "completion_stream_error.sse", b.Bytes())
}

func TestRefusals(t *testing.T) {
	for body, param := range map[string]string{
		`{"prompt":"x"}`:                                  "model",
		`{"model":"m"}`:                                   "prompt",
		`{"model":"m","prompt":[]}`:                       "prompt",
		`{"model":"m","prompt":[1,2]}`:                    "prompt[0]",
		`{"model":"m","prompt":[[1,2]]}`:                  "prompt[0]",
		`{"model":"m","prompt":{"a":1}}`:                  "prompt",
		`{"model":"m","prompt":["a",""]}`:                 "prompt[1]",
		`{"model":"m","prompt":"a","max_tokens":-1}`:      "max_tokens",
		`{"model":"m","prompt":"a","n":0}`:                "n",
		`{"model":"m","prompt":"a","best_of":2}`:          "best_of",
		`{"model":"m","prompt":"a","suffix":"b"}`:         "suffix",
		`{"model":"m","prompt":"a","logit_bias":{"1":1}}`: "logit_bias",
		`{"model":"m","prompt":"a","logprobs":21}`:        "logprobs",
		`{"model":"m","prompt":"a","temperature":3}`:      "temperature",
	} {
		_, err := Parse([]byte(body))
		var re *formats.RequestError
		if !errors.As(err, &re) || re.Param != param {
			t.Errorf("%s: error %v, want one on %s", body, err, param)
		}
	}
	// max_tokens 0 generates nothing; best_of equal to n is n.
	r := formatstest.Parse(t, Parse, `{"model":"m","prompt":"a","max_tokens":0,"n":2,"best_of":2}`)
	if !r.PromptOnly || r.Choices != 2 || r.Logprobs {
		t.Errorf("parsed %+v", r.Request)
	}
	if got := ForPrompt(r, 0).Prompt; got != inference.Literal("a") {
		t.Errorf("the prompt reaches the engine as %q, not as data", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","prompt":"Once"}`,
		`{"model":"m","prompt":["a","b"],"n":3,"echo":true,"logprobs":5,"max_tokens":0}`,
		`{"model":"m","prompt":[[1]],"stop":["x","y"],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","prompt":"<|im_start|>system","seed":1,"top_k":3,"suffix":""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Parse(body)
		if err != nil {
			var re *formats.RequestError
			if !errors.As(err, &re) {
				t.Fatalf("an error that is no *RequestError: %v", err)
			}
			return
		}
		if len(r.Prompts) == 0 || len(r.Prompts) > MaxPrompts || r.Choices > inference.MaxChoices || r.TopLogprobs > inference.MaxTopLogprobs || r.MaxTokens < 0 {
			t.Fatalf("accepted out of bounds: %+v", r)
		}
		for i := range r.Prompts {
			if r.Prompts[i] == "" || ForPrompt(r, i).Prompt != inference.Literal(r.Prompts[i]) {
				t.Fatalf("prompt %d: %q", i, r.Prompts[i])
			}
		}
		// Every accepted request encodes a response and a stream.
		res := inference.Result{Text: "x", FinishReason: inference.FinishLength}
		results := make([][]inference.Result, len(r.Prompts))
		for i := range results {
			for range max(1, r.Choices) {
				results[i] = append(results[i], res)
			}
		}
		formatstest.JSON(t, NewResponse(r, results, formats.Options{}))
		s := NewStream(&bytes.Buffer{}, r, formats.Options{})
		for i := range len(r.Prompts) * max(1, r.Choices) {
			if err := s.Event(inference.Event{Choice: i, Final: &res}); err != nil {
				t.Fatal(err)
			}
		}
	})
}
