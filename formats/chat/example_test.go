package chat_test

import (
	"fmt"
	"os"
	"time"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/inference"
)

// A chat request becomes the hub's request; the engine's result comes
// back as a chat completion or as a stream of chunks.
func Example() {
	req, err := chat.Parse([]byte(`{"model":"core-2-5-mini","messages":[{"role":"user","content":"Hi"}]}`))
	if err != nil {
		fmt.Println(formats.ErrorOf(err).Status)
		return
	}
	fmt.Println(req.MaxTokens, *req.Temperature, req.Reasoning.Effort)

	o := formats.Options{
		NewID: func(prefix string) string { return prefix + "1" },
		Now:   func() time.Time { return time.Unix(0, 0) },
	}
	res := inference.Result{Text: "Hello!", FinishReason: inference.FinishStop, StopToken: 151645, Usage: inference.Usage{PromptTokens: 3, CompletionTokens: 2}}
	c := chat.NewCompletion(req, []inference.Result{res}, o)
	fmt.Println(c.ID, c.Choices[0].Message.Content, c.Usage.TotalTokens)

	s := chat.NewStream(os.Stdout, req, o)
	_ = s.Event(inference.Event{Text: "Hello!"})
	_ = s.Event(inference.Event{Final: &res})
	// Output:
	// 2048 0.1 high
	// chatcmpl-1 Hello! 5
	// data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"core-2-5-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}
	//
	// data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"core-2-5-mini","choices":[{"index":0,"delta":{"content":"Hello!"},"logprobs":null,"finish_reason":null}]}
	//
	// data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"core-2-5-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop","matched_stop":151645}]}
	//
	// data: [DONE]
}
