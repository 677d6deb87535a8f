package formats_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/openai/openai-go/v3"
)

func TestSDKErrors(t *testing.T) {
	_, url := formatstest.ServeGolden(t, 401, "error_auth_chat.txt")
	_, err := formatstest.OpenAI(url).Chat.Completions.New(context.Background(), formatstest.ChatParams())
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 401 || oe.Code != "invalid_api_key" || oe.Type != "invalid_request_error" {
		t.Errorf("openai error = %#v", err)
	}
	_, url = formatstest.ServeGolden(t, 400, "error_invalid_chat.txt")
	_, err = formatstest.OpenAI(url).Responses.New(context.Background(), formatstest.ResponsesParams())
	if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Param != "temperature" || !strings.Contains(oe.Message, "between 0 and 2") {
		t.Errorf("openai error = %#v", err)
	}

	_, url = formatstest.ServeGolden(t, 401, "error_auth_messages.txt")
	_, err = formatstest.Anthropic(url).Messages.New(context.Background(), formatstest.MessagesParams())
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae.StatusCode != 401 || !strings.Contains(ae.RawJSON(), `"authentication_error"`) {
		t.Errorf("anthropic error = %v", err)
	}
	// The SDK reads error.type: one of Anthropic's documented types, not
	// the spec's word "error".
	if ae != nil && ae.Type() != anthropic.ErrorTypeAuthenticationError {
		t.Errorf("anthropic error type = %q", ae.Type())
	}
}

func TestSDKModels(t *testing.T) {
	_, url := formatstest.ServeGolden(t, 200, "model_list.json")
	page, err := formatstest.OpenAI(url).Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 3 || page.Data[0].ID != "core-2-5-pro" || page.Data[0].OwnedBy != "inferkit" || page.Data[0].Created != 1767225600 {
		t.Errorf("models = %+v", page.Data)
	}
}
