package chat

import (
	"bytes"
	"testing"

	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/inference"
)

func TestGoldenChat(t *testing.T) {
	req := formatstest.Parse(t, Parse, formatstest.ChatBody)
	formatstest.Golden(t, "chat_completion.json", formatstest.JSON(t, NewCompletion(req, []inference.Result{formatstest.Thinking()}, formatstest.Options())))
	formatstest.Golden(t, "chat_completion_stop.json", formatstest.JSON(t, NewCompletion(req, []inference.Result{formatstest.StopSeq()}, formatstest.Options())))
	formatstest.Golden(t, "chat_completion_length.json", formatstest.JSON(t, NewCompletion(req, []inference.Result{formatstest.Length()}, formatstest.Options())))

	var b bytes.Buffer
	formatstest.Stream(t, NewStream(&b, req, formatstest.Options()), formatstest.ThinkingEvents(), nil)
	formatstest.Golden(t, "chat_stream.sse", b.Bytes())

	b.Reset()
	req.IncludeUsage = true
	formatstest.Stream(t, NewStream(&b, req, formatstest.Options()), formatstest.PlainEvents(), nil)
	formatstest.Golden(t, "chat_stream_usage.sse", b.Bytes())

	b.Reset()
	formatstest.Stream(t, NewStream(&b, req, formatstest.Options()), formatstest.PlainEvents()[:1], inference.ErrOverloaded)
	formatstest.Golden(t, "chat_stream_error.sse", b.Bytes())
}
