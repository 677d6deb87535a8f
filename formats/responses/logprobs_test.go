package responses

import (
	"bytes"
	"testing"

	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/inference"
)

func TestGoldenResponseLogprobs(t *testing.T) {
	req := formatstest.Parse(t, Parse, `{"model":"core-2-5-pro","input":"Hi","top_logprobs":2}`)
	res := formatstest.Logprobs()
	formatstest.Golden(t, "response_logprobs.json", formatstest.JSON(t, NewResponse(req, res, formatstest.Options())))

	// The deltas carry their tokens' entries; the done event all of them.
	var b bytes.Buffer
	formatstest.Stream(t, NewStream(&b, req, formatstest.Options()), []inference.Event{
		{Text: "Hi", Logprobs: res.Logprobs[:1]},
		{Final: &res},
	}, nil)
	formatstest.Golden(t, "responses_stream_logprobs.sse", b.Bytes())
}
