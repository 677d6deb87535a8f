//go:build cgo

package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/policy"
)

// These tests drive a Handler on the real engine and a real tiny model
// with the official OpenAI and Anthropic Go SDKs: the SDKs must parse
// every response and every stream.

const sdkContext = 512

// sdkServer serves the model at path under the spec's ids on an
// httptest server, mounted under a prefix as a caller would, and returns
// its base URL (prefix included).
func sdkServer(t *testing.T, path string) string {
	t.Helper()
	return serveSpecIDs(t, path, sdkContext)
}

// specModels are the spec's chat ids, core-2-5-mini and core-2-5-pro,
// on the model at path.
func specModels(path string) []catalog.Model {
	var models []catalog.Model
	for _, id := range []string{policy.Core25Mini, policy.Core25Pro} {
		m, _ := policy.Model(id)
		m.Path = path
		models = append(models, m)
	}
	return models
}

// serveSpecIDs serves the model at path under core-2-5-mini and
// core-2-5-pro, with context tokens per sequence, on an httptest server
// mounted under /api, and returns that base URL.
func serveSpecIDs(t *testing.T, path string, context int) string {
	t.Helper()
	models := specModels(path)
	return serveEngine(t, inference.Config{Models: models, Parallel: 2, ContextTokens: context}, httpapi.Config{Models: models}, "/api")
}

// serveEngine serves a Handler of hc over a real engine of ec (one thread
// unless ec says otherwise, the engine's logs discarded, and the
// Handler's unless hc has a Logger) on an httptest server, with
// key's static key unless hc has Keys, mounted under prefix ("" for the
// root) as a caller would mount it; it returns the base URL, prefix
// included. Both close when the test ends.
func serveEngine(t testing.TB, ec inference.Config, hc httpapi.Config, prefix string) string {
	t.Helper()
	if ec.Threads == 0 {
		ec.Threads = 1
	}
	ec.Logger = slog.New(slog.DiscardHandler)
	eng, err := inference.New(ec)
	if err != nil {
		t.Fatal(err)
	}
	hc.Engine = eng
	if hc.Logger == nil {
		hc.Logger = slog.New(slog.DiscardHandler)
	}
	if hc.Keys == nil {
		hc.Keys, _ = httpapi.NewStaticKeys(key)
	}
	h, err := httpapi.New(hc)
	if err != nil {
		eng.Close()
		t.Fatal(err)
	}
	var root http.Handler = h
	if prefix != "" {
		mux := http.NewServeMux()
		mux.Handle(prefix+"/", http.StripPrefix(prefix, h))
		root = mux
	}
	srv := httptest.NewServer(root)
	t.Cleanup(func() {
		srv.Close()
		eng.Close()
	})
	return srv.URL + prefix
}

// tinyModel writes the byte-level random model of the tests, a tiny
// Qwen3, whose family thinks and calls tools.
func tinyModel(t *testing.T) string {
	return inferencetest.Model(t, inferencetest.Options{Seed: 3, Arch: "qwen3", ChatTemplate: inferencetest.Qwen3Template})
}

func openaiSDK(url, k string) openai.Client {
	return openai.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey(k), option.WithMaxRetries(0))
}

func anthropicSDK(url, k string) anthropic.Client {
	// WithAPIKey sends x-api-key, as Anthropic clients do by default.
	return anthropic.NewClient(aoption.WithBaseURL(url), aoption.WithAPIKey(k), aoption.WithMaxRetries(0))
}

// streamedMessage is the message a Messages stream accumulates; a
// stream error fails the test.
func streamedMessage(t *testing.T, s *ssestream.Stream[anthropic.MessageStreamEventUnion]) anthropic.Message {
	t.Helper()
	var msg anthropic.Message
	for s.Next() {
		if err := msg.Accumulate(s.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return msg
}

func chatRequest(content string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:       policy.Core25Mini,
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage(content)},
		MaxTokens:   openai.Int(24),
		Temperature: openai.Float(0),
	}
}

func TestSDKOpenAIChat(t *testing.T) {
	url := sdkServer(t, tinyModel(t))
	client := openaiSDK(url, key)
	ctx := context.Background()

	c, err := client.Chat.Completions.New(ctx, chatRequest("Say hello."))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.ID, "chatcmpl-") || c.Object != "chat.completion" || c.Model != policy.Core25Mini || len(c.Choices) != 1 {
		t.Fatalf("completion %+v", c)
	}
	ch := c.Choices[0]
	t.Logf("chat: %q, %s, %d+%d tokens", ch.Message.Content, ch.FinishReason, c.Usage.PromptTokens, c.Usage.CompletionTokens)
	if ch.Message.Content == "" || (ch.FinishReason != "stop" && ch.FinishReason != "length") || ch.Message.Role != "assistant" {
		t.Errorf("choice %+v", ch)
	}
	if u := c.Usage; u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens || u.CompletionTokens > 24 {
		t.Errorf("usage %+v", u)
	}

	params := chatRequest("Say hello.")
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := client.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	chunks, usageChunks := 0, 0
	for s.Next() {
		chunk := s.Current()
		acc.AddChunk(chunk)
		chunks++
		if len(chunk.Choices) == 0 && chunk.Usage.TotalTokens > 0 {
			usageChunks++
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if chunks < 3 || usageChunks != 1 || !strings.HasPrefix(acc.ID, "chatcmpl-") {
		t.Errorf("%d chunks, %d usage chunks, id %q", chunks, usageChunks, acc.ID)
	}
	if ch := acc.Choices[0]; ch.Message.Content == "" || (ch.FinishReason != "stop" && ch.FinishReason != "length") {
		t.Errorf("streamed choice %+v", ch)
	}
	if u := acc.Usage; u.PromptTokens != c.Usage.PromptTokens || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("streamed usage %+v, blocking %+v", u, c.Usage)
	}

	// The spec's own path answers the SDK as well.
	if _, err := client.Chat.Completions.New(ctx, chatRequest("Hi"), option.WithBaseURL(url+"/v1/web/")); err != nil {
		t.Errorf("/v1/web/chat/completions: %v", err)
	}

	// Errors reach the SDK as typed errors.
	var oe *openai.Error
	bad := openaiSDK(url, wrongKey)
	if _, err := bad.Chat.Completions.New(ctx, chatRequest("Hi")); !errors.As(err, &oe) || oe.StatusCode != 401 || oe.Code != "invalid_api_key" {
		t.Errorf("wrong key: %v", err)
	}
	unknown := chatRequest("Hi")
	unknown.Model = "gpt-4o"
	if _, err := client.Chat.Completions.New(ctx, unknown); !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Code != "model_not_found" || oe.Param != "model" {
		t.Errorf("unknown model: %v", err)
	}
}

func responsesRequest(input string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:           policy.Core25Pro,
		Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String(input)},
		Instructions:    openai.String("Be brief."),
		MaxOutputTokens: openai.Int(16),
		Temperature:     openai.Float(0),
	}
}

func TestSDKOpenAIResponses(t *testing.T) {
	url := sdkServer(t, tinyModel(t))
	client := openaiSDK(url, key)
	ctx := context.Background()

	r, err := client.Responses.New(ctx, responsesRequest("Say hello."))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.ID, "resp_") || (r.Status != "completed" && r.Status != "incomplete") || r.OutputText() == "" {
		t.Fatalf("response %s %s %q", r.ID, r.Status, r.OutputText())
	}
	if u := r.Usage; u.InputTokens <= 0 || u.OutputTokens <= 0 || u.TotalTokens != u.InputTokens+u.OutputTokens || u.OutputTokens > 16 {
		t.Errorf("usage %+v", u)
	}

	// The stored response comes back whole.
	got, err := client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != r.ID || got.OutputText() != r.OutputText() || got.Usage.TotalTokens != r.Usage.TotalTokens {
		t.Errorf("GET %+v", got)
	}

	// previous_response_id continues it: the prompt holds the first turn.
	next := responsesRequest("And goodbye?")
	next.PreviousResponseID = openai.String(r.ID)
	r2, err := client.Responses.New(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("responses: %q then %q, input tokens %d then %d", r.OutputText(), r2.OutputText(), r.Usage.InputTokens, r2.Usage.InputTokens)
	if r2.PreviousResponseID != r.ID || r2.Usage.InputTokens <= r.Usage.InputTokens+int64(len("And goodbye?"))/2 || r2.OutputText() == "" {
		t.Errorf("continued: previous %q, input tokens %d after %d", r2.PreviousResponseID, r2.Usage.InputTokens, r.Usage.InputTokens)
	}

	// Streaming, then continuing the streamed response.
	s := client.Responses.NewStreaming(ctx, responsesRequest("Count to three."))
	var last responses.ResponseStreamEventUnion
	var deltas strings.Builder
	seq, created := int64(0), false
	for s.Next() {
		ev := s.Current()
		if ev.SequenceNumber != seq {
			t.Errorf("sequence_number %d, want %d", ev.SequenceNumber, seq)
		}
		seq++
		switch ev.Type {
		case "response.created":
			created = true
		case "response.output_text.delta":
			deltas.WriteString(ev.Delta)
		}
		last = ev
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if !created || (last.Type != "response.completed" && last.Type != "response.incomplete") ||
		deltas.String() == "" || last.Response.OutputText() != deltas.String() || last.Response.Usage.OutputTokens <= 0 {
		t.Errorf("stream: created %v, last %s, deltas %q, output %q", created, last.Type, deltas.String(), last.Response.OutputText())
	}
	next = responsesRequest("Go on.")
	next.PreviousResponseID = openai.String(last.Response.ID)
	if _, err := client.Responses.New(ctx, next); err != nil {
		t.Errorf("continuing a streamed response: %v", err)
	}

	// Delete, then it is gone.
	if err := client.Responses.Delete(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	var oe *openai.Error
	if _, err := client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); !errors.As(err, &oe) || oe.StatusCode != 404 {
		t.Errorf("GET after DELETE: %v", err)
	}
	// store: false keeps nothing.
	ns := responsesRequest("Hi")
	ns.Store = openai.Bool(false)
	r3, err := client.Responses.New(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Responses.Get(ctx, r3.ID, responses.ResponseGetParams{}); !errors.As(err, &oe) || oe.StatusCode != 404 {
		t.Errorf("GET of a store:false response: %v", err)
	}
}

func TestSDKOpenAIModels(t *testing.T) {
	url := sdkServer(t, tinyModel(t))
	client := openaiSDK(url, key)
	ctx := context.Background()
	page, err := client.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 2 || page.Data[0].ID != policy.Core25Mini || page.Data[0].Object != "model" || page.Data[0].OwnedBy != "inferkit" {
		t.Fatalf("models %+v", page.Data)
	}
	m, err := client.Models.Get(ctx, policy.Core25Pro)
	if err != nil {
		t.Fatal(err)
	}
	var o catalog.Object
	if err := json.Unmarshal([]byte(m.RawJSON()), &o); err != nil {
		t.Fatal(err)
	}
	// The listing promises what one sequence of the engine holds.
	if m.ID != policy.Core25Pro || o.ContextLength != sdkContext || o.MaxOutputLength != sdkContext || o.Pricing.Completion != "0.000008" {
		t.Errorf("model %+v", o)
	}
	var oe *openai.Error
	if _, err := client.Models.Get(ctx, "core-9"); !errors.As(err, &oe) || oe.StatusCode != 404 || oe.Code != "model_not_found" {
		t.Errorf("unknown model: %v", err)
	}
}

func messagesRequest() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:       policy.Core25Mini,
		MaxTokens:   24,
		System:      []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages:    []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello."))},
		Thinking:    anthropic.ThinkingConfigParamOfEnabled(16),
		Temperature: anthropic.Float(0),
	}
}

func TestSDKAnthropicMessages(t *testing.T) {
	url := sdkServer(t, tinyModel(t))
	client := anthropicSDK(url, key)
	ctx := context.Background()

	m, err := client.Messages.New(ctx, messagesRequest())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.ID, "msg_") || m.Role != "assistant" || string(m.Model) != policy.Core25Mini || len(m.Content) == 0 {
		t.Fatalf("message %+v", m)
	}
	text := m.Content[len(m.Content)-1]
	t.Logf("messages: %q, %s", text.Text, m.StopReason)
	if text.Type != "text" || text.Text == "" || (m.StopReason != "end_turn" && m.StopReason != "max_tokens") {
		t.Errorf("content %+v, stop %q", m.Content, m.StopReason)
	}
	// No cache_control breakpoint: nothing is written to the cache for
	// the client, and the first request reads nothing from it, so the
	// whole prompt is input_tokens.
	if u := m.Usage; u.InputTokens <= 0 || u.CacheCreationInputTokens != 0 || u.CacheReadInputTokens != 0 || u.OutputTokens <= 0 || u.OutputTokens > 24 {
		t.Errorf("usage %+v", m.Usage)
	}

	s := client.Messages.NewStreaming(ctx, messagesRequest())
	var acc anthropic.Message
	events := map[string]int{}
	for s.Next() {
		ev := s.Current()
		events[ev.Type]++
		if err := acc.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if events["message_start"] != 1 || events["message_stop"] != 1 || events["content_block_delta"] == 0 || events["message_delta"] != 1 {
		t.Errorf("events %v", events)
	}
	last := acc.Content[len(acc.Content)-1]
	if !strings.HasPrefix(acc.ID, "msg_") || last.Text == "" || (acc.StopReason != "end_turn" && acc.StopReason != "max_tokens") || acc.Usage.OutputTokens <= 0 {
		t.Errorf("accumulated %+v", acc)
	}
	// The same prompt again: message_delta's usage replaces
	// message_start's, most of the prompt is read from the prefix cache,
	// and the counts sum to the blocking answer's prompt.
	if u := acc.Usage; u.CacheReadInputTokens == 0 || u.CacheCreationInputTokens != 0 || u.InputTokens+u.CacheReadInputTokens != m.Usage.InputTokens {
		t.Errorf("accumulated usage %+v, blocking %+v", u, m.Usage)
	}

	// Bearer keys work too, and errors come in the messages shape.
	bearer := anthropic.NewClient(aoption.WithBaseURL(url), aoption.WithAuthToken(key), aoption.WithMaxRetries(0))
	if _, err := bearer.Messages.New(ctx, messagesRequest()); err != nil {
		t.Errorf("bearer: %v", err)
	}
	var ae *anthropic.Error
	bad := anthropicSDK(url, wrongKey)
	if _, err := bad.Messages.New(ctx, messagesRequest()); !errors.As(err, &ae) || ae.StatusCode != 401 || ae.Type() != anthropic.ErrorTypeAuthenticationError {
		t.Errorf("wrong key: %v", err)
	}
}

// TestSDKStories runs the trained tiny llama, whose greedy continuations
// are real text, through both SDKs.
func TestSDKStories(t *testing.T) {
	path, err := filepath.Abs("../../shared/models/stories260K.gguf")
	if err == nil {
		_, err = os.Stat(path)
	}
	if err != nil {
		t.Skipf("skipping: the tiny trained model is not at ../shared/models/stories260K.gguf (%v)", err)
	}
	url := sdkServer(t, path)
	ctx := context.Background()
	client := openaiSDK(url, key)
	params := chatRequest("Once upon a time")
	params.MaxTokens = openai.Int(32)
	c, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stories: %q", c.Choices[0].Message.Content)
	words := strings.Fields(c.Choices[0].Message.Content)
	if len(words) < 3 || c.Usage.CompletionTokens <= 0 {
		t.Errorf("stories wrote %q", c.Choices[0].Message.Content)
	}
	// Stories has no template: the engine's ChatML, of the hermes family,
	// which does not think. Asking it to think is a 400 naming the
	// field; without thinking it writes.
	ac := anthropicSDK(url, key)
	mp := messagesRequest()
	_, err = ac.Messages.New(ctx, mp)
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || !strings.Contains(ae.Error(), "thinking.budget_tokens") {
		t.Fatalf("thinking on a family that does not think: %v, want a 400 naming thinking.budget_tokens", err)
	}
	mp.Thinking = anthropic.ThinkingConfigParamUnion{}
	m, err := ac.Messages.New(ctx, mp)
	if err != nil {
		t.Fatal(err)
	}
	if len(strings.Fields(m.Content[len(m.Content)-1].Text)) < 2 {
		t.Errorf("stories wrote %+v", m.Content)
	}
}
