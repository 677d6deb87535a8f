package formats_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/formats/messages"
	"github.com/inferkit/inferkit/formats/responses"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/policy"
)

func TestGoldenErrors(t *testing.T) {
	cases := map[string]error{
		"invalid":     formats.Invalid("temperature", "temperature must be between 0 and 2, got 3"),
		"auth":        formats.Unauthorized(),
		"not_found":   formats.ModelNotFound("nope"),
		"rate_limit":  formats.RateLimited(2*time.Second, "rate limit reached for requests"),
		"overloaded":  inference.ErrOverloaded,
		"server":      errors.New("secret detail"),
		"too_large":   &http.MaxBytesError{Limit: 1 << 20},
		"context_len": fmt.Errorf("run: %w", inference.ErrContextLength),
		"missing":     formats.Missing("model"),
		"located":     &formats.RequestError{Param: "questions.a.b.type", Loc: []any{"questions", "a.b", "type"}, Message: "unknown type"},
	}
	for name, err := range cases {
		for _, f := range []struct {
			name string
			f    formats.Style
		}{{"chat", formats.StyleChat}, {"messages", formats.StyleMessages}, {"systemone", formats.StyleSystemOne}} {
			rec := httptest.NewRecorder()
			formats.WriteError(rec, f.f, err)
			got := fmt.Sprintf("HTTP %d\nContent-Type: %s\nRetry-After: %s\n\n%s\n", rec.Code,
				rec.Header().Get("Content-Type"), rec.Header().Get("Retry-After"), rec.Body.Bytes())
			formatstest.Golden(t, "error_"+name+"_"+f.name+".txt", []byte(got))
		}
	}
}

func TestGoldenModels(t *testing.T) {
	var objs []catalog.Object
	for _, id := range []string{policy.Core25Pro, policy.Core25Mini, policy.CoreCode} {
		m, ok := policy.Model(id)
		if !ok {
			t.Fatal(id)
		}
		m.Created = 1767225600
		m.Datacenters = []string{"DE"}
		objs = append(objs, m.Object(32768))
	}
	formatstest.Golden(t, "model_list.json", formatstest.JSON(t, formats.NewModelList(objs)))
	formatstest.Golden(t, "model.json", formatstest.JSON(t, objs[0]))
}

// TestGoldenConverted writes each style's request converted into the
// others.
func TestGoldenConverted(t *testing.T) {
	req := formatstest.Parse(t, chat.Parse, formatstest.ChatBody)
	formatstest.Golden(t, "chat_to_messages_request.json", formatstest.JSON(t, messages.NewRequest(req)))
	formatstest.Golden(t, "chat_to_responses_request.json", formatstest.JSON(t, responses.NewRequest(req)))
	req = formatstest.Parse(t, messages.Parse, formatstest.MessagesBody)
	formatstest.Golden(t, "messages_to_chat_request.json", formatstest.JSON(t, chat.NewRequest(req)))
	req = formatstest.Parse(t, responses.Parse, formatstest.ResponsesBody)
	formatstest.Golden(t, "responses_to_chat_request.json", formatstest.JSON(t, chat.NewRequest(req)))
	formatstest.Golden(t, "responses_to_messages_request.json", formatstest.JSON(t, messages.NewRequest(req)))
}
