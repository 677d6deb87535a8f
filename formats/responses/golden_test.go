package responses

import (
	"bytes"
	"errors"
	"testing"

	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/inference"
)

func TestGoldenResponses(t *testing.T) {
	req := formatstest.Parse(t, Parse, formatstest.ResponsesBody)
	formatstest.Golden(t, "response.json", formatstest.JSON(t, NewResponse(req, formatstest.Thinking(), formatstest.Options())))
	formatstest.Golden(t, "response_incomplete.json", formatstest.JSON(t, NewResponse(req, formatstest.Length(), formatstest.Options())))
	formatstest.Golden(t, "response_failed.json", formatstest.JSON(t, FailedResponse(req, inference.ErrOverloaded, formatstest.Options())))

	var b bytes.Buffer
	formatstest.Stream(t, NewStream(&b, req, formatstest.Options()), formatstest.ThinkingEvents(), nil)
	formatstest.Golden(t, "responses_stream.sse", b.Bytes())

	b.Reset()
	final := formatstest.Length()
	formatstest.Stream(t, NewStream(&b, req, formatstest.Options()), []inference.Event{{Text: "Once upon"}, {Final: &final}}, nil)
	formatstest.Golden(t, "responses_stream_incomplete.sse", b.Bytes())

	b.Reset()
	formatstest.Stream(t, NewStream(&b, req, formatstest.Options()), formatstest.PlainEvents()[:1], errors.New("boom"))
	formatstest.Golden(t, "responses_stream_failed.sse", b.Bytes())
}
