//go:build cgo

package httpapi_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/httpapi"
)

// TestSDKPrepaid: the official OpenAI and Anthropic Go SDKs read a
// prepaid refusal as the 429 it is (OpenAI's code insufficient_quota on
// chat completions and responses; Anthropic's rate_limit_error on
// messages), and succeed once a purchase tops the balance up.
func TestSDKPrepaid(t *testing.T) {
	e := accountsEnvWith(t, nil, nil, func(ac *account.Config, _ *httpapi.Config) { ac.Billing = account.Prepaid })
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close)
	k := field(admin(t, e.h, "POST", "/v1/admin/api-keys", `{"name":"sdk"}`, http.StatusCreated), "key")
	oai, ant := openaiSDK(srv.URL, k), anthropicSDK(srv.URL, k)
	ctx := t.Context()
	chat := func() error {
		_, err := oai.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "core-2-5-mini",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}})
		return err
	}
	resp := func() error {
		_, err := oai.Responses.New(ctx, responses.ResponseNewParams{Model: "core-2-5-mini",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
		return err
	}
	msg := func() error {
		_, err := ant.Messages.New(ctx, anthropic.MessageNewParams{Model: "core-2-5-mini", MaxTokens: 64,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hi"))}})
		return err
	}
	for name, call := range map[string]func() error{"chat": chat, "responses": resp} {
		var oe *openai.Error
		if err := call(); !errors.As(err, &oe) || oe.StatusCode != http.StatusTooManyRequests || oe.Code != "insufficient_quota" {
			t.Errorf("%s before a purchase: %v, want a 429 insufficient_quota", name, err)
		}
	}
	var ae *anthropic.Error
	if err := msg(); !errors.As(err, &ae) || ae.StatusCode != http.StatusTooManyRequests || ae.Type() != "rate_limit_error" {
		t.Errorf("messages before a purchase: %v, want a 429 rate_limit_error", err)
	}
	admin(t, e.h, "POST", "/v1/admin/credits", `{"id":"pay_sdk","account":"default","amount_usd":"5"}`, 200)
	for name, call := range map[string]func() error{"chat": chat, "responses": resp, "messages": msg} {
		if err := call(); err != nil {
			t.Errorf("%s after a purchase of 5 USD: %v", name, err)
		}
	}
}
