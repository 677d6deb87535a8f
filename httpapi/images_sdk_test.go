//go:build cgo

package httpapi_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/bitmap/bitmaptest"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// visionServer serves a tiny model with a vision projector (16 tokens an
// image) as core-2-5-mini, fetching image URLs under remote, and returns
// its base URL.
func visionServer(t *testing.T, remote *httpapi.RemoteImages) string {
	t.Helper()
	m, _ := policy.Model(policy.Core25Mini)
	m.Path = inferencetest.Model(t, inferencetest.Options{Seed: 3})
	m.Projector = inferencetest.Projector(t, inferencetest.ProjectorOptions{})
	models := []catalog.Model{m}
	return serveEngine(t, inference.Config{Models: models, Parallel: 2, ContextTokens: 512}, httpapi.Config{Models: models, RemoteImages: remote}, "")
}

// imageHost serves the test's pictures: /red.png, a /huge.png beyond
// any bound, a /slow.png that never comes, and 404 elsewhere.
func imageHost(t *testing.T) *httptest.Server {
	red := inferencetest.PNG(40, 30, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/red.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(red)
		case "/huge.png":
			w.Write(make([]byte, 2<<20))
		case "/slow.png":
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		case "/redirect":
			http.Redirect(w, r, "/red.png", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func dataURLOf(img []byte) string {
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(img)
}

func chatWithImage(imageURL string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model: policy.Core25Mini,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("What is this?"),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: imageURL}),
		})},
		MaxTokens:       openai.Int(4),
		Temperature:     openai.Float(0),
		ReasoningEffort: shared.ReasoningEffortNone,
	}
}

func TestSDKImagesOnEveryStyle(t *testing.T) {
	host := imageHost(t)
	remote := &httpapi.RemoteImages{AllowPrivate: true, MaxBytes: 1 << 20, Timeout: 2 * time.Second}
	base := visionServer(t, remote)
	client := openaiSDK(base, key)
	ctx := context.Background()
	red := inferencetest.PNG(40, 30, 1)

	// The listing says the model reads images.
	m, err := client.Models.Get(ctx, policy.Core25Mini)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.RawJSON(), `"image"`) {
		t.Errorf("the listing of a model with a projector: %s", m.RawJSON())
	}

	plain := chatWithImage("")
	plain.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
		openai.TextContentPart("What is this?")})}
	text, err := client.Chat.Completions.New(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	inline, err := client.Chat.Completions.New(ctx, chatWithImage(dataURLOf(red)))
	if err != nil {
		t.Fatal(err)
	}
	if inline.Usage.PromptTokens < text.Usage.PromptTokens+16 {
		t.Errorf("with an image: %d prompt tokens; without: %d", inline.Usage.PromptTokens, text.Usage.PromptTokens)
	}
	// The same picture fetched from a URL is the same prompt, and the
	// prompt cache knows it.
	for _, path := range []string{"/red.png", "/redirect"} {
		fetched, err := client.Chat.Completions.New(ctx, chatWithImage(host.URL+path))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if fetched.Usage.PromptTokens != inline.Usage.PromptTokens || fetched.Usage.PromptTokensDetails.CachedTokens != fetched.Usage.PromptTokens-1 {
			t.Errorf("%s: %+v, inline %+v", path, fetched.Usage, inline.Usage)
		}
	}

	// Messages: a base64 block and a url block.
	ac := anthropicSDK(base, key)
	for name, block := range map[string]anthropic.ContentBlockParamUnion{
		"base64": anthropic.NewImageBlockBase64("image/png", base64.StdEncoding.EncodeToString(red)),
		"url":    anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: host.URL + "/red.png"}),
	} {
		msg, err := ac.Messages.New(ctx, anthropic.MessageNewParams{
			Model: policy.Core25Mini, MaxTokens: 4,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is this?"), block)},
		})
		if err != nil {
			t.Fatalf("messages %s: %v", name, err)
		}
		total := msg.Usage.InputTokens + msg.Usage.CacheReadInputTokens + msg.Usage.CacheCreationInputTokens
		if total < 16 {
			t.Errorf("messages %s: usage %+v", name, msg.Usage)
		}
		// count_tokens counts the image as the messages route does.
		count, err := ac.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: policy.Core25Mini,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is this?"), block)}})
		if err != nil {
			t.Fatalf("count_tokens %s: %v", name, err)
		}
		if count.InputTokens != total {
			t.Errorf("count_tokens %s: %d, the messages route counted %d", name, count.InputTokens, total)
		}
	}

	// Responses: input_image.
	resp, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: policy.Core25Mini, MaxOutputTokens: openai.Int(16),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
				responses.ResponseInputContentParamOfInputText("What is this?"),
				{OfInputImage: &responses.ResponseInputImageParam{ImageURL: openai.String(dataURLOf(red)), Detail: responses.ResponseInputImageDetailAuto}},
			}, "user"),
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.InputTokens < 16 {
		t.Errorf("responses usage %+v", resp.Usage)
	}

	// Remote images that cannot be had are the request's fault.
	for path, want := range map[string]string{
		"/missing.png": "404",
		"/huge.png":    "bytes",
		"/slow.png":    "within",
	} {
		_, err := client.Chat.Completions.New(ctx, chatWithImage(host.URL+path))
		var oe *openai.Error
		if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Param != "messages" || oe.Code != "invalid_image_url" || !strings.Contains(oe.Message, want) {
			t.Errorf("%s: %v, want a 400 saying %q", path, err, want)
		}
	}
}

func TestRemoteImagesRefused(t *testing.T) {
	host := imageHost(t)
	ctx := context.Background()
	for name, c := range map[string]struct {
		remote *httpapi.RemoteImages
		want   string
	}{
		"no fetching":       {nil, "data: URL"},
		"private addresses": {&httpapi.RemoteImages{}, "not public"},
		"not allowed": {&httpapi.RemoteImages{AllowPrivate: true, Allow: func(u *url.URL) bool { return u.Host == "images.example.com" }},
			"does not fetch"},
		"too many": {&httpapi.RemoteImages{AllowPrivate: true, MaxImages: 1}, "at most 1"},
	} {
		t.Run(name, func(t *testing.T) {
			client := openaiSDK(visionServer(t, c.remote), key)
			params := chatWithImage(host.URL + "/red.png")
			if name == "too many" {
				params.Messages = append(params.Messages, chatWithImage(host.URL+"/red.png").Messages...)
			}
			_, err := client.Chat.Completions.New(ctx, params)
			var oe *openai.Error
			if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Param != "messages" || !strings.Contains(oe.Message, c.want) {
				t.Fatalf("%v, want a 400 saying %q", err, c.want)
			}
		})
	}
}

// A refused fetch names the URL the request gave, never an address that
// its host name resolved to: "localhost" is refused as not public, without
// 127.0.0.1 or ::1 in the message.
func TestRemoteImageErrorNamesNoAddress(t *testing.T) {
	host := imageHost(t)
	u, err := url.Parse(host.URL)
	if err != nil {
		t.Fatal(err)
	}
	client := openaiSDK(visionServer(t, &httpapi.RemoteImages{}), key)
	given := "http://localhost:" + u.Port() + "/red.png"
	_, err = client.Chat.Completions.New(context.Background(), chatWithImage(given))
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Code != "invalid_image_url" {
		t.Fatalf("%v, want a 400 invalid_image_url", err)
	}
	if !strings.Contains(oe.Message, given) || !strings.Contains(oe.Message, "not public") {
		t.Errorf("message %q does not name %q as not public", oe.Message, given)
	}
	for _, addr := range []string{"127.0.0.1", "::1", "[::1]"} {
		if strings.Contains(oe.Message, addr) {
			t.Errorf("message %q names the resolved address %s", oe.Message, addr)
		}
	}
}

// An image is decoded only once its request is admitted, in Go: a picture
// whose header reads but whose pixels do not (a PNG cut after its header,
// the zlib bomb) is a 429 for a key past its limit, having cost no
// decoding, and a 400 naming the image for a key within it. The scan bomb
// is refused from its bytes alone, before admission.
func TestImageDecodedAfterAdmission(t *testing.T) {
	m, _ := policy.Model(policy.Core25Mini)
	m.Path = inferencetest.Model(t, inferencetest.Options{Seed: 3})
	m.Projector = inferencetest.Projector(t, inferencetest.ProjectorOptions{})
	models := []catalog.Model{m}
	keys, err := httpapi.NewTieredKeys(httpapi.APIKey{Key: key, Tier: ratelimit.Tier{Name: "one", Requests: 1}},
		httpapi.APIKey{Key: otherKey, Tier: policy.Unlimited})
	if err != nil {
		t.Fatal(err)
	}
	base := serveEngine(t, inference.Config{Models: models, Parallel: 2, ContextTokens: 512},
		httpapi.Config{Models: models, Keys: keys, Limiter: ratelimit.NewMemory()}, "")
	ctx := context.Background()
	limited, unlimited := openaiSDK(base, key), openaiSDK(base, otherKey)
	plain := chatWithImage("")
	plain.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")}
	if _, err := limited.Chat.Completions.New(ctx, plain); err != nil { // the minute's one request
		t.Fatal(err)
	}
	status := func(t *testing.T, err error) (int, string) {
		t.Helper()
		var oe *openai.Error
		if !errors.As(err, &oe) {
			t.Fatalf("%v, want an API error", err)
		}
		return oe.StatusCode, oe.Message
	}
	for _, tc := range []struct {
		name, picture, want string
		limitedStatus       int
	}{
		{"header only", dataURLOf(inferencetest.PNG(40, 30, 1)[:33]), "cannot be decoded", 429},
		{"zlib bomb", dataURLOf(bitmaptest.ZlibBomb(64 << 20)), "too much pixel data", 429},
		{"scan bomb", "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(
			bitmaptest.JPEG{Width: 4096, Height: 4096, Scans: 5000, Empty: true}.Bytes()), "more than 10 times over", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, msg := status(t, firstErr(limited.Chat.Completions.New(ctx, chatWithImage(tc.picture)))); code != tc.limitedStatus {
				t.Errorf("the key past its limit: %d %q, want %d", code, msg, tc.limitedStatus)
			}
			if code, msg := status(t, firstErr(unlimited.Chat.Completions.New(ctx, chatWithImage(tc.picture)))); code != 400 || !strings.Contains(msg, "image 0") || !strings.Contains(msg, tc.want) {
				t.Errorf("the key within its limit: %d %q, want a 400 saying %q of image 0", code, msg, tc.want)
			}
		})
	}
	// The engine still reads pictures.
	if _, err := unlimited.Chat.Completions.New(ctx, chatWithImage(dataURLOf(inferencetest.PNG(40, 30, 1)))); err != nil {
		t.Fatal(err)
	}
}

// firstErr is the error of a call's two results.
func firstErr[T any](_ T, err error) error { return err }
