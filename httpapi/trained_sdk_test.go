//go:build cgo

package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest/tinychat"
	"github.com/inferkit/inferkit/inference/inferencetest/tinyembed"
	"github.com/inferkit/inferkit/policy"
)

// These tests assert what a model says, not only the shape of its
// answer: the official SDKs against the tiny trained chat model
// (tinychat.Model), in each API style, straight and through a
// gateway of remote entries. They check the paths, not the model's
// accuracy (inference's TestChatModelSkills measures that): the model
// copies some names with their syllables swapped, so these use names it
// copies right, and its tool's schema with the keys in the order it
// was trained on (an SDK's map would sort them; the model knows only
// that order), and no choices, which it has not learnt.

// trainedServers serves the trained model under the spec's chat ids and
// system-one-9b, and a gateway in front of it.
func trainedServers(t *testing.T) map[string]string {
	path := tinychat.Model(t)
	models := specModels(path)
	m, _ := policy.Model(policy.SystemOne9B)
	m.Path = path
	models = append(models, m)
	up := serveEngine(t, inference.Config{Models: models, Parallel: 2, ContextTokens: 1024}, httpapi.Config{Models: models}, "/api")
	return map[string]string{"in process": up, "through a gateway": gatewayOf(t, 1024, up)}
}

func weatherParams(t *testing.T) map[string]any {
	return schemaMap(t, string(tinychat.WeatherTool.Parameters))
}

// trainedSchema is the weather tool's schema with its keys in the order
// the model was trained on, for option.WithJSONSet to send as it is.
var trainedSchema = json.RawMessage(tinychat.WeatherTool.Parameters)

func TestTrainedToolCall(t *testing.T) {
	for name, url := range trainedServers(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			client := openaiSDK(url, key)
			weather := tinychat.WeatherTool
			tool := openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: weather.Name,
				Description: openai.String(weather.Description), Parameters: weatherParams(t)})
			for _, city := range []string{"Tavolu", "Lune", "Ranesi"} {
				c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: policy.Core25Mini,
					Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in " + city + "?")},
					Tools:    []openai.ChatCompletionToolUnionParam{tool}, Temperature: openai.Float(0), MaxTokens: openai.Int(96),
					ReasoningEffort: shared.ReasoningEffortNone}, option.WithJSONSet("tools.0.function.parameters", trainedSchema))
				if err != nil {
					t.Fatal(err)
				}
				calls := c.Choices[0].Message.ToolCalls
				if len(calls) != 1 || calls[0].Function.Name != "get_weather" || cityOf(t, calls[0].Function.Arguments) != city {
					t.Errorf("chat, %s: %+v", city, c.Choices[0].Message)
				}
			}

			// Messages, streamed: a tool_use block with the city.
			ac := anthropicSDK(url, key)
			msg := streamedMessage(t, ac.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: policy.Core25Mini, MaxTokens: 96,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Tavolu?"))},
				Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: weather.Name, Description: anthropic.String(weather.Description),
					InputSchema: anthropic.ToolInputSchemaParam{Properties: weatherParams(t)["properties"], Required: []string{"city"}}}}},
				Thinking:    anthropic.ThinkingConfigParamUnion{OfDisabled: &anthropic.ThinkingConfigDisabledParam{}},
				Temperature: anthropic.Float(0)}, aoption.WithJSONSet("tools.0.input_schema", trainedSchema)))
			var uses []anthropic.ContentBlockUnion
			for _, b := range msg.Content {
				if b.Type == "tool_use" {
					uses = append(uses, b)
				}
			}
			if msg.StopReason != "tool_use" || len(uses) != 1 || cityOf(t, string(uses[0].Input)) != "Tavolu" {
				t.Errorf("messages: %+v", msg.Content)
			}

			// Then the tool's result, answered in words.
			c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: policy.Core25Mini,
				Messages: []openai.ChatCompletionMessageParamUnion{
					openai.UserMessage("Weather in Tavolu?"),
					{OfAssistant: &openai.ChatCompletionAssistantMessageParam{ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{
						OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: "call_1",
							Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `{"city": "Tavolu"}`}}}}}},
					openai.ToolMessage(`{"temp": 14}`, "call_1"),
				},
				Tools: []openai.ChatCompletionToolUnionParam{tool}, Temperature: openai.Float(0), MaxTokens: openai.Int(96),
				ReasoningEffort: shared.ReasoningEffortNone}, option.WithJSONSet("tools.0.function.parameters", trainedSchema))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Choices[0].Message.Content; got != "It is 14 degrees in Tavolu." {
				t.Errorf("answer from the tool's result: %q", got)
			}
		})
	}
}

func cityOf(t *testing.T, arguments string) string {
	var a struct{ City string }
	if err := json.Unmarshal([]byte(arguments), &a); err != nil {
		t.Errorf("arguments %q: %v", arguments, err)
	}
	return a.City
}

// TestTrainedRecall: a second turn remembers the first, through plain
// history (chat) and through previous_response_id (responses).
func TestTrainedRecall(t *testing.T) {
	for name, url := range trainedServers(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			client := openaiSDK(url, key)
			c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: policy.Core25Mini,
				Messages: []openai.ChatCompletionMessageParamUnion{
					openai.UserMessage("My name is Karimo and I live in Lune."), openai.AssistantMessage("Noted."), openai.UserMessage("Where do I live?"),
				}, Temperature: openai.Float(0), MaxTokens: openai.Int(32), ReasoningEffort: shared.ReasoningEffortNone})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Choices[0].Message.Content; got != "Lune." {
				t.Errorf("chat history: %q", got)
			}

			first := responses.ResponseNewParams{Model: policy.Core25Mini, Temperature: openai.Float(0), MaxOutputTokens: openai.Int(32),
				Input:     responses.ResponseNewParamsInputUnion{OfString: openai.String("My number is 412.")},
				Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortNone}}
			r1, err := client.Responses.New(ctx, first)
			if err != nil {
				t.Fatal(err)
			}
			if got := r1.OutputText(); got != "Noted." {
				t.Errorf("first turn: %q", got)
			}
			next := first
			next.Input = responses.ResponseNewParamsInputUnion{OfString: openai.String("What is my number?")}
			next.PreviousResponseID = openai.String(r1.ID)
			r2, err := client.Responses.New(ctx, next)
			if err != nil {
				t.Fatal(err)
			}
			if got := r2.OutputText(); !strings.HasPrefix(got, "412") {
				t.Errorf("second turn through previous_response_id: %q", got)
			}
		})
	}
}

// TestTrainedThinking: the Responses API with a reasoning effort, which
// an engine and a gateway both pass on (the model's context is too short
// for the Messages API's smallest thinking budget, 1,024 tokens): with
// thinking on, in process, the reasoning item comes first and the answer
// after it; through a gateway, whose upstream chat API sends no
// reasoning text, and with thinking off, the answer alone. (The thought
// itself is not on the OpenAI wire, which carries a summary: inference's
// TestChatModelSkills checks it.)
func TestTrainedThinking(t *testing.T) {
	for name, url := range trainedServers(t) {
		t.Run(name, func(t *testing.T) {
			client := openaiSDK(url, key)
			history := responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
				responses.ResponseInputItemParamOfMessage("My name is Karimo and I live in Lune.", responses.EasyInputMessageRoleUser),
				responses.ResponseInputItemParamOfMessage("Noted.", responses.EasyInputMessageRoleAssistant),
				responses.ResponseInputItemParamOfMessage("Where do I live?", responses.EasyInputMessageRoleUser),
			}}
			for _, effort := range []shared.ReasoningEffort{shared.ReasoningEffortLow, shared.ReasoningEffortNone} {
				r, err := client.Responses.New(context.Background(), responses.ResponseNewParams{Model: policy.Core25Mini, Input: history,
					Temperature: openai.Float(0), MaxOutputTokens: openai.Int(96), Reasoning: shared.ReasoningParam{Effort: effort}})
				if err != nil {
					t.Fatal(err)
				}
				var kinds []string
				for _, item := range r.Output {
					kinds = append(kinds, item.Type)
				}
				want := []string{"message"}
				if effort != shared.ReasoningEffortNone && name == "in process" {
					want = []string{"reasoning", "message"}
				}
				if !slices.Equal(kinds, want) || r.OutputText() != "Lune." {
					t.Errorf("effort %s: items %q, text %q", effort, kinds, r.OutputText())
				}
			}
		})
	}
}

// TestTrainedJSON: JSON of a schema, in the chat and responses styles,
// that parses, validates and holds what the user said.
func TestTrainedJSON(t *testing.T) {
	schema := schemaMap(t, string(tinychat.PersonSchema))
	for name, url := range trainedServers(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			client := openaiSDK(url, key)
			ask := "Karimo lives in Tavolu and is 42. Reply in JSON."
			c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: policy.Core25Mini,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(ask)},
				ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
					JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "person", Schema: schema, Strict: openai.Bool(true)}}},
				Temperature: openai.Float(0), MaxTokens: openai.Int(96), ReasoningEffort: shared.ReasoningEffortNone})
			if err != nil {
				t.Fatal(err)
			}
			checkPerson(t, "chat", c.Choices[0].Message.Content, c.Choices[0].FinishReason)

			r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: policy.Core25Mini, Temperature: openai.Float(0), MaxOutputTokens: openai.Int(96),
				Input:     responses.ResponseNewParamsInputUnion{OfString: openai.String(ask)},
				Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortNone},
				Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
					OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "person", Schema: schema, Strict: openai.Bool(true)}}}})
			if err != nil {
				t.Fatal(err)
			}
			checkPerson(t, "responses", r.OutputText(), string(r.Status))
		})
	}
}

// checkPerson checks JSON that the trained model wrote for
// "Karimo lives in Tavolu and is 42", and that it ended there.
func checkPerson(t *testing.T, style, text, finish string) {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(text))
	d.DisallowUnknownFields()
	var p struct {
		Age        int
		City, Name string
	}
	if err := d.Decode(&p); err != nil || d.More() || p != (struct {
		Age        int
		City, Name string
	}{42, "Tavolu", "Karimo"}) {
		t.Errorf("%s: %q (%v): %+v", style, text, err, p)
	}
	if finish != "stop" && finish != "completed" {
		t.Errorf("%s: finished %q, not at the JSON's end", style, finish)
	}
}

// TestTrainedDecisions: System One's endpoint, on questions the state
// decides, puts its probability on the right option: in process, where
// the engine scores the options' labels, and through a gateway, where
// the upstream's first-token log-probabilities do.
func TestTrainedDecisions(t *testing.T) {
	for name, url := range trainedServers(t) {
		t.Run(name, func(t *testing.T) {
			var res struct {
				Answers map[string]struct {
					Noul          *float64
					Probabilities map[string]float64
				}
			}
			decide := func(body string) {
				req, _ := http.NewRequest(http.MethodPost, url+"/v1/systemone", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 || json.Unmarshal(b, &res) != nil {
					t.Fatalf("%d %s", resp.StatusCode, b)
				}
			}
			decide(`{"model": "` + policy.SystemOne9B + `", "state": "Karimo lives in Tavolu.", "questions": {
				"here": {"type": "noul", "instructions": "Does Karimo live in Tavolu?"},
				"there": {"type": "noul", "instructions": "Does Karimo live in Misepa?"}}}`)
			if a := res.Answers["here"]; a.Noul == nil || *a.Noul < 0.9 {
				t.Errorf("does Karimo live in Tavolu: %v", a.Noul)
			}
			if a := res.Answers["there"]; a.Noul == nil || *a.Noul > 0.1 {
				t.Errorf("does Karimo live in Misepa: %v", a.Noul)
			}
			decide(`{"model": "` + policy.SystemOne9B + `", "state": "Karimo found the room good.", "questions": {
				"room": {"type": "score", "instructions": "How did Karimo find the room?", "criteria": ["awful", "poor", "fine", "good", "great"]}}}`)
			if p := res.Answers["room"].Probabilities; p["3"] < 0.9 {
				t.Errorf("how did Karimo find the room (good, level 3): %v", p)
			}
		})
	}
}

// TestTrainedEmbeddings: the OpenAI SDK's embeddings of the tiny trained
// embedding model (tinyembed.Model) put another phrasing of a fact
// nearest it, on held-out probes.
func TestTrainedEmbeddings(t *testing.T) {
	models := []catalog.Model{{ID: "core-embed", Path: tinyembed.Model(t), Kind: catalog.KindEmbedding}}
	client := openaiSDK(serveEngine(t, inference.Config{Models: models, Parallel: 1}, httpapi.Config{Models: models}, ""), key)
	probes := tinyembed.Probes(tinyembed.Stream(7, "test"), 20)
	right := 0
	for _, p := range probes {
		res, err := client.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "core-embed",
			Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: append([]string{p.Query}, p.Candidates...)}})
		if err != nil {
			t.Fatal(err)
		}
		var vs [][]float64
		for _, d := range res.Data {
			vs = append(vs, d.Embedding)
		}
		best := tinyembed.Nearest(vs[0], vs[1:])
		if best == p.Right {
			right++
		} else {
			t.Logf("%q: nearest %q, not %q", p.Query, p.Candidates[best], p.Candidates[p.Right])
		}
	}
	if right < 19 {
		t.Errorf("%d of %d probes right, want 19 or more", right, len(probes))
	}
}
