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

// A background response's stream: queued, then in progress, then
// cancelled mid-message. Its progress shows the output so far.
func TestGoldenResponsesCancelled(t *testing.T) {
	req := formatstest.Parse(t, Parse, formatstest.ResponsesBody)
	req.Background = true
	var b bytes.Buffer
	s := NewStream(&b, req, formatstest.Options())
	if err := s.Queue(); err != nil {
		t.Fatal(err)
	}
	if p := s.Progress(); p.Status != "queued" || !p.Background || len(p.Output) != 0 {
		t.Errorf("queued progress: %s, background %v, %d items", p.Status, p.Background, len(p.Output))
	}
	formatstest.Stream(t, s, []inference.Event{{Text: "Once upon"}}, nil)
	p := s.Progress()
	if p.Status != "in_progress" || len(p.Output) != 1 || p.Output[0].Status != "in_progress" || p.Output[0].Content[0].Text != "Once upon" || p.OutputText != "Once upon" {
		t.Errorf("progress %+v", p)
	}
	if err := s.Cancel(); err != nil {
		t.Fatal(err)
	}
	r := s.Response()
	if r.Status != "cancelled" || r.Usage != nil || len(r.Output) != 1 || r.Output[0].Status != "incomplete" || r.OutputText != "Once upon" {
		t.Errorf("cancelled response %+v", r)
	}
	formatstest.Golden(t, "responses_stream_cancelled.sse", b.Bytes())
}
