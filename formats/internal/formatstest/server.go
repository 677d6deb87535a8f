package formatstest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// Fake is a server that answers every request with one canned response
// and keeps the last request body in Got. Set its fields before the
// requests it answers; it serves one request at a time.
type Fake struct {
	Status      int
	ContentType string
	Body        []byte
	Got         []byte
}

// ServeHTTP answers with the canned response.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.Got, _ = io.ReadAll(r.Body)
	w.Header().Set("Content-Type", f.ContentType)
	w.WriteHeader(f.Status)
	_, _ = w.Write(f.Body)
}

// ServeGolden starts a fake server, closed when t ends, that answers
// with status and the golden file name (an event stream for .sse, the
// body after the headers for an error's .txt), and returns it and its
// URL.
func ServeGolden(t testing.TB, status int, name string) (*Fake, string) {
	t.Helper()
	ct := "application/json"
	if strings.HasSuffix(name, ".sse") {
		ct = "text/event-stream"
	}
	body := ReadGolden(t, name)
	if strings.HasSuffix(name, ".txt") { // an error golden: status and headers, then the body
		_, b, _ := strings.Cut(string(body), "\n\n")
		body = []byte(strings.TrimSuffix(b, "\n"))
	}
	f := &Fake{Status: status, ContentType: ct, Body: body}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// OpenAI returns an OpenAI client of the server at url, without retries.
func OpenAI(url string) *openai.Client {
	c := openai.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	return &c
}

// Anthropic returns an Anthropic client of the server at url, without
// retries.
func Anthropic(url string) *anthropic.Client {
	c := anthropic.NewClient(aoption.WithBaseURL(url), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
	return &c
}

// SSEFrame is one frame of an event stream: its event name, its data
// lines joined, and how many event lines it has.
type SSEFrame struct {
	Event, Data string
	Events      int
}

// SSEFrames splits a raw event stream into its frames, failing t on a
// line that is neither event nor data or a stream that does not end with
// a blank line.
func SSEFrames(t testing.TB, body []byte) []SSEFrame {
	t.Helper()
	if !bytes.HasSuffix(body, []byte("\n\n")) {
		t.Fatalf("the stream does not end with a blank line:\n%s", body)
	}
	var frames []SSEFrame
	for raw := range strings.SplitSeq(strings.TrimSuffix(string(body), "\n\n"), "\n\n") {
		var f SSEFrame
		var data []string
		for line := range strings.SplitSeq(raw, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				f.Event = strings.TrimPrefix(line, "event: ")
				f.Events++
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			default:
				t.Errorf("line %q is neither event nor data", line)
			}
		}
		f.Data = strings.Join(data, "\n")
		frames = append(frames, f)
	}
	return frames
}

// ChatParams is a chat request of the OpenAI SDK with the sampling
// parameters it can send.
func ChatParams() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:               "core-2-5-pro",
		Messages:            []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Capital of France?")},
		MaxCompletionTokens: openai.Int(100),
		Temperature:         openai.Float(0.5),
		TopP:                openai.Float(0.9),
		Seed:                openai.Int(7),
		N:                   openai.Int(1),
		User:                openai.String("u1"),
		FrequencyPenalty:    openai.Float(0.1),
		PresencePenalty:     openai.Float(0.2),
		ReasoningEffort:     shared.ReasoningEffortLow,
		Stop:                openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"END"}},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object"}})},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}},
	}
}

// MessagesParams is a messages request of the Anthropic SDK.
func MessagesParams() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:         "core-2-5-pro",
		MaxTokens:     1024,
		System:        []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages:      []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Capital of France?"))},
		Thinking:      anthropic.ThinkingConfigParamOfEnabled(512),
		StopSequences: []string{"END"},
		TopK:          anthropic.Int(40),
		Metadata:      anthropic.MetadataParam{UserID: anthropic.String("u1")},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather",
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
	}
}

// ResponsesParams is a responses request of the OpenAI SDK.
func ResponsesParams() responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:           "core-2-5-pro",
		Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String("Capital of France?")},
		Instructions:    openai.String("Be brief."),
		MaxOutputTokens: openai.Int(300),
		Metadata:        shared.Metadata{"topic": "geo"},
		Reasoning:       shared.ReasoningParam{Effort: shared.ReasoningEffortHigh, Summary: shared.ReasoningSummaryAuto},
		Store:           openai.Bool(false),
		Temperature:     openai.Float(0.3),
		User:            openai.String("u1"),
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "answer", Schema: map[string]any{"type": "object"}}}},
	}
}
