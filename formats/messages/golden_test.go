package messages

import (
	"bytes"
	"errors"
	"testing"

	"github.com/inferkit/inferkit/formats/internal/formatstest"
)

func TestGoldenMessages(t *testing.T) {
	req := formatstest.Parse(t, Parse, formatstest.MessagesBody)
	formatstest.Golden(t, "message.json", formatstest.JSON(t, NewMessage(req, formatstest.Thinking(), formatstest.Options())))
	formatstest.Golden(t, "message_stop.json", formatstest.JSON(t, NewMessage(req, formatstest.StopSeq(), formatstest.Options())))
	formatstest.Golden(t, "message_length.json", formatstest.JSON(t, NewMessage(req, formatstest.Length(), formatstest.Options())))

	var b bytes.Buffer
	s := NewStream(&b, req, formatstest.Options())
	s.InputTokens = 20
	formatstest.Stream(t, s, formatstest.ThinkingEvents(), nil)
	formatstest.Golden(t, "messages_stream.sse", b.Bytes())

	b.Reset()
	formatstest.Stream(t, NewStream(&b, req, formatstest.Options()), formatstest.PlainEvents(), nil)
	formatstest.Golden(t, "messages_stream_stop.sse", b.Bytes())

	b.Reset()
	formatstest.Stream(t, NewStream(&b, req, formatstest.Options()), formatstest.PlainEvents()[:1], errors.New("boom"))
	formatstest.Golden(t, "messages_stream_error.sse", b.Bytes())
}

func TestGoldenTokenCount(t *testing.T) {
	formatstest.Golden(t, "count_tokens.json", formatstest.JSON(t, TokenCount{InputTokens: 42}))
}
