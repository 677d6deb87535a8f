//go:build cgo

package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/policy"
)

// These tests put inferkit in front of a second inferkit, whose models it
// serves as remote entries (catalog.Model.Remote): the official SDKs
// against the gateway get what they get straight from the upstream.

// gatewayOf serves the spec's chat ids and its decision model as remote
// entries of the upstream replicas at upURLs, with a context of context
// tokens (the chat ids under their own names, the decision model on the
// upstream's core-2-5-mini), and returns the gateway's base URL.
func gatewayOf(t testing.TB, context int, upURLs ...string) string {
	t.Helper()
	return gatewayAs(t, context, "", upURLs...)
}

// gatewayAs is gatewayOf with every entry on the upstream's model
// upModel ("" for gatewayOf's names).
func gatewayAs(t testing.TB, context int, upModel string, upURLs ...string) string {
	t.Helper()
	var models []catalog.Model
	for _, id := range []string{policy.Core25Mini, policy.Core25Pro, policy.SystemOne9B} {
		m, _ := policy.Model(id)
		up := id
		if m.Kind == catalog.KindDecision {
			up = policy.Core25Mini
		}
		if upModel != "" {
			up = upModel
		}
		var urls []string
		for _, u := range upURLs {
			urls = append(urls, u+"/v1")
		}
		m.Remote = &catalog.Remote{URLs: urls, Model: up, Key: key, ContextLength: context}
		models = append(models, m)
	}
	return serveEngine(t, inference.Config{Models: models}, httpapi.Config{Models: models}, "")
}

func TestRemoteSDKOpenAIChat(t *testing.T) {
	up := sdkServer(t, tinyModel(t))
	gw := gatewayOf(t, sdkContext, up)
	ctx := context.Background()
	direct, through := openaiSDK(up, key), openaiSDK(gw, key)

	want, err := direct.Chat.Completions.New(ctx, chatRequest("Say hello."))
	if err != nil {
		t.Fatal(err)
	}
	got, err := through.Chat.Completions.New(ctx, chatRequest("Say hello."))
	if err != nil {
		t.Fatal(err)
	}
	if got.Choices[0].Message.Content != want.Choices[0].Message.Content || got.Choices[0].FinishReason != want.Choices[0].FinishReason {
		t.Fatalf("through the gateway %q (%s), straight %q (%s)", got.Choices[0].Message.Content, got.Choices[0].FinishReason,
			want.Choices[0].Message.Content, want.Choices[0].FinishReason)
	}
	if got.Usage.PromptTokens != want.Usage.PromptTokens || got.Usage.CompletionTokens != want.Usage.CompletionTokens {
		t.Errorf("usage through the gateway %+v, straight %+v", got.Usage, want.Usage)
	}
	if got.Model != policy.Core25Mini {
		t.Errorf("model %q", got.Model)
	}

	// Streaming, with the usage chunk and log-probabilities.
	params := chatRequest("Say hello.")
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	params.Logprobs = openai.Bool(true)
	params.TopLogprobs = openai.Int(3)
	s := through.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.Choices[0].Message.Content != want.Choices[0].Message.Content || acc.Usage.CompletionTokens != want.Usage.CompletionTokens {
		t.Errorf("streamed %q %+v, want %q", acc.Choices[0].Message.Content, acc.Usage, want.Choices[0].Message.Content)
	}
	if lp := acc.Choices[0].Logprobs.Content; len(lp) != int(want.Usage.CompletionTokens) || len(lp[0].TopLogprobs) != 3 {
		t.Errorf("logprobs %+v", lp)
	}

	// Structured output passes as the upstream's json_schema.
	js := chatRequest("Give a name.")
	js.MaxTokens = openai.Int(60)
	js.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
		JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: "n", Schema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string", "maxLength": 8}}, "required": []string{"name"}}}}}
	c, err := through.Chat.Completions.New(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	wantJS, err := direct.Chat.Completions.New(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Choices[0].Message.Content, wantJS.Choices[0].Message.Content; got != want || !strings.HasPrefix(got, "{") {
		t.Errorf("json_schema answer through the gateway %q, straight %q", got, want)
	}

	// A field the remote engine cannot take is refused by name.
	bad := chatRequest("Hi")
	bad.N = openai.Int(2)
	var oe *openai.Error
	if _, err := through.Chat.Completions.New(ctx, bad); !asStatus(err, &oe, 400) || oe.Param != "n" {
		t.Errorf("n=2: %v", err)
	}
}

func TestRemoteSDKTools(t *testing.T) {
	up := toolServer(t)
	gw := gatewayOf(t, 4096, up)
	ctx := context.Background()
	schemas := offered(t)
	req := chatToolRequest(t, openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")})
	for _, url := range []string{up, gw} {
		client := openaiSDK(url, key)
		c, err := client.Chat.Completions.New(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		ch := c.Choices[0]
		if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) == 0 {
			t.Fatalf("%s: %+v", url, ch)
		}
		for _, call := range ch.Message.ToolCalls {
			schemas.check(t, call.Function.Name, call.Function.Arguments, "")
		}
	}

	// Messages, streamed, through the gateway: tool_use blocks.
	params := anthropic.MessageNewParams{Model: policy.Core25Mini, MaxTokens: toolTokens,
		Messages:    []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Oslo?"))},
		Tools:       anthropicTools(t),
		ToolChoice:  anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}},
		Thinking:    anthropic.ThinkingConfigParamUnion{OfDisabled: &anthropic.ThinkingConfigDisabledParam{}},
		Temperature: anthropic.Float(0),
	}
	ac := anthropicSDK(gw, key)
	msg := streamedMessage(t, ac.Messages.NewStreaming(ctx, params))
	uses := 0
	for _, b := range msg.Content {
		if b.Type == "tool_use" {
			uses++
			schemas.check(t, b.Name, string(b.Input), "")
		}
	}
	if msg.StopReason != "tool_use" || uses == 0 {
		t.Fatalf("message %+v", msg)
	}
}

// TestRemoteSDKResponses: stored responses and previous_response_id are
// the gateway's, whatever the upstream keeps.
func TestRemoteSDKResponses(t *testing.T) {
	up := sdkServer(t, tinyModel(t))
	gw := gatewayOf(t, sdkContext, up)
	ctx := context.Background()
	client := openaiSDK(gw, key)
	first, err := client.Responses.New(ctx, responsesRequest("My name is Ada."))
	if err != nil {
		t.Fatal(err)
	}
	next := responsesRequest("What is my name?")
	next.PreviousResponseID = openai.String(first.ID)
	second, err := client.Responses.New(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	// The second turn's prompt holds the first: more input tokens than
	// the first turn and its answer.
	if second.Usage.InputTokens <= first.Usage.InputTokens+first.Usage.OutputTokens {
		t.Errorf("second turn read %d tokens; the first %d+%d", second.Usage.InputTokens, first.Usage.InputTokens, first.Usage.OutputTokens)
	}
	got, err := client.Responses.Get(ctx, second.ID, responses.ResponseGetParams{})
	if err != nil || got.OutputText() != second.OutputText() {
		t.Fatalf("stored %v: %v", got, err)
	}
}

// TestRemoteDecisions: a decision model on a remote engine answers in
// System One's shape from the upstream's first-token log-probabilities,
// which are the numbers the upstream's own engine computes for the same
// prompt; a question with more options than the upstream lists tokens is
// a 400 naming it.
func TestRemoteDecisions(t *testing.T) {
	replica := newUpstreamReplica(t, tinyModel(t), 2)
	up := replica.URL
	gw := gatewayOf(t, sdkContext, up)
	post := func(body string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, gw+"/v1/systemone", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		return resp.StatusCode, out
	}
	status, out := post(`{"model":"` + policy.SystemOne9B + `","state":"The door is open.","questions":{
		"door":{"type":"choice","criteria":{"open":"it is open","closed":"it is shut","locked":"it is locked"}},
		"sure":{"type":"noul","instructions":"Is the door open?"},
		"warm":{"type":"score","criteria":["cold","mild","hot"]}}}`)
	if status != 200 {
		t.Fatalf("%d %v", status, out)
	}
	answers := out["answers"].(map[string]any)
	for _, name := range []string{"door", "warm"} {
		sum := 0.0
		for _, p := range answers[name].(map[string]any)["probabilities"].(map[string]any) {
			sum += p.(float64)
		}
		if sum < 0.999999 || sum > 1.000001 {
			t.Errorf("%s: probabilities sum to %v", name, sum)
		}
	}
	if n := answers["sure"].(map[string]any)["noul"].(float64); n < 0 || n > 1 {
		t.Errorf("noul %v", n)
	}
	if u := out["usage"].(map[string]any)["input_tokens"].(float64); u <= 0 {
		t.Errorf("usage %v", out["usage"])
	}

	opts := map[string]string{}
	for i := range inference.MaxTopLogprobs + 1 {
		opts[strings.Repeat("o", i+1)] = "an option"
	}
	b, _ := json.Marshal(map[string]any{"model": policy.SystemOne9B, "state": "s", "questions": map[string]any{"q": map[string]any{"type": "choice", "criteria": opts}}})
	if status, out := post(string(b)); status != 422 || !bytes.Contains(mustJSON(out), []byte("remote engine")) {
		t.Errorf("21 options: %d %v", status, out)
	}

	// System One's SDK through the gateway: every check but the one of
	// 255 options, which a remote engine refuses by name.
	for name, r := range systemOneChecks(t, gw, key) {
		if name == "255 options" && strings.Contains(r, "remote engine") {
			continue
		}
		if r != "ok" {
			t.Errorf("System One SDK, %s: %s", name, r)
		}
	}

	// The numbers a remote decision reads are the upstream engine's: a
	// question's first-token log-probabilities through the remote path
	// equal, to float rounding, those the upstream generates in process,
	// and those its branch scoring (the in-process decision path) gives
	// the same tokens after the same prompt, to within 1e-3.
	ctx := context.Background()
	zero := 0.0
	q := inference.Request{Model: policy.Core25Mini, MaxTokens: 1, Temperature: &zero, NoThinking: true, Logprobs: true, TopLogprobs: inference.MaxTopLogprobs,
		Messages: []inference.Message{inference.Text(inference.RoleSystem, "You evaluate a state."),
			inference.Text(inference.RoleUser, "<state>\nThe door is open.\n</state>\n\nQuestion: Is the door open?\nAnswer Yes for yes or No for no.")}}
	local, err := replica.eng.Generate(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := inference.New(inference.Config{Logger: slog.New(slog.DiscardHandler),
		Models: []catalog.Model{{ID: policy.Core25Mini, Remote: &catalog.Remote{URLs: []string{up + "/v1"}, Key: key, ContextLength: sdkContext}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	got, err := remote.Generate(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	lt, rt := local.Logprobs[0].Top, got.Logprobs[0].Top
	if len(lt) != inference.MaxTopLogprobs || len(rt) != len(lt) {
		t.Fatalf("top tokens: %d in process, %d remote", len(lt), len(rt))
	}
	prompt, err := replica.eng.RenderPrompt(q)
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.LastIndex(prompt, "<|im_start|>assistant")
	sr := inference.ScoreRequest{Model: policy.Core25Mini, Prefix: prompt[:cut], Branches: []inference.Branch{{Text: prompt[cut:]}}}
	for i := range lt {
		if string(rt[i].Bytes) != string(lt[i].Bytes) || math.Abs(rt[i].Logprob-lt[i].Logprob) > 1e-9 {
			t.Errorf("top %d: remote %q %v, in process %q %v", i, rt[i].Bytes, rt[i].Logprob, lt[i].Bytes, lt[i].Logprob)
		}
		sr.Branches[0].Candidates = append(sr.Branches[0].Candidates, []int{lt[i].Token})
	}
	scored, err := replica.eng.Score(ctx, sr)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for i, lp := range scored.Branches[0].LogProbs {
		worst = max(worst, math.Abs(lp-lt[i].Logprob))
	}
	t.Logf("first-token log-probabilities: remote = generated in process; scored in process within %.2g", worst)
	if worst > 1e-3 {
		t.Errorf("branch scoring differs from generation by %v", worst)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// upstreamReplica serves the spec's ids on the model at path, as one
// replica of an upstream, counting its chat requests; the test may kill
// it (Kill).
type upstreamReplica struct {
	*httptest.Server
	eng   *inference.Engine
	chats atomic.Int64
	// stall, when set, holds every chat stream once it has written its
	// first text, until it is closed; streaming hears of each.
	stall     chan struct{}
	streaming chan struct{}
}

// stallingWriter holds a stream at its first text (upstreamReplica.stall).
type stallingWriter struct {
	http.ResponseWriter
	r    *upstreamReplica
	held bool
}

func (w *stallingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	if !w.held && firstText.Match(b) {
		w.held = true
		w.ResponseWriter.(http.Flusher).Flush()
		w.r.streaming <- struct{}{}
		<-w.r.stall
	}
	return n, err
}

func (w *stallingWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

var firstText = regexp.MustCompile(`"content":"[^"]`)

func newUpstreamReplica(t testing.TB, path string, parallel int) *upstreamReplica {
	t.Helper()
	models := specModels(path)
	eng, err := inference.New(inference.Config{Models: models, Parallel: parallel, ContextTokens: sdkContext, Threads: 1,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := httpapi.NewStaticKeys(key)
	h, err := httpapi.New(httpapi.Config{Engine: eng, Models: models, Keys: keys, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r := &upstreamReplica{eng: eng}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/v1/chat/completions" {
			r.chats.Add(1)
			if r.stall != nil {
				w = &stallingWriter{ResponseWriter: w, r: r}
			}
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(func() {
		r.Close()
		h.Close()
		eng.Close()
	})
	return r
}

// Kill cuts the replica's connections and stops it listening, as a
// process that died.
func (r *upstreamReplica) Kill() {
	r.Listener.Close()
	r.CloseClientConnections()
}

// TestRemoteReplicas: two upstream replicas behind one gateway. Requests
// that share a prompt prefix go to one replica, whose prefix cache then
// serves them (the upstream's cached-token counts say so); one replica
// killed mid-load loses no request that had not started streaming.
func TestRemoteReplicas(t *testing.T) {
	path := tinyModel(t)
	a, b := newUpstreamReplica(t, path, 2), newUpstreamReplica(t, path, 2)
	gw := gatewayOf(t, sdkContext, a.URL, b.URL)
	client := openaiSDK(gw, key)
	ctx := context.Background()

	conversation := func(i int) openai.ChatCompletionNewParams {
		p := chatRequest("Say hello.")
		p.Messages[0] = openai.SystemMessage(fmt.Sprintf("You are assistant number %d. ", i) + strings.Repeat("Answer briefly and kindly. ", 12))
		p.MaxTokens = openai.Int(4)
		return p
	}
	send := func(i int) (cached, prompt int64) {
		t.Helper()
		c, err := client.Chat.Completions.New(ctx, conversation(i))
		if err != nil {
			t.Fatal(err)
		}
		return c.Usage.PromptTokensDetails.CachedTokens, c.Usage.PromptTokens
	}
	// Find a conversation that
	// goes to the other replica than conversation 0 does...
	send(0)
	first := a.chats.Load() == 1
	other := 1
	for ; other < 32; other++ {
		before := a.chats.Load()
		send(other)
		if (a.chats.Load() > before) != first {
			break
		}
	}
	if other == 32 {
		t.Fatal("32 conversations all went to one replica")
	}
	// ... then alternate them (after a round that caches conversation 0
	// again, where the search sent others to its replica): each finds
	// its whole prefix cached on its replica, which a replica serving
	// both would have dropped.
	send(0)
	for round := range 3 {
		for _, i := range []int{0, other} {
			cached, prompt := send(i)
			t.Logf("round %d, conversation %d: %d of %d prompt tokens cached", round, i, cached, prompt)
			if cached < prompt-1 {
				t.Errorf("conversation %d again: %d of %d prompt tokens cached: it went to the other replica", i, cached, prompt)
			}
		}
	}

	// Kill a mid-load: a's streams hold at their first text, and once
	// one does, a dies while more requests come.
	a.stall, a.streaming = make(chan struct{}), make(chan struct{}, 64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lost, cut, served int
	run := func(i int) {
		p := conversation(100 + i)
		p.MaxTokens = openai.Int(48)
		s := client.Chat.Completions.NewStreaming(ctx, p)
		text := ""
		for s.Next() {
			for _, ch := range s.Current().Choices {
				text += ch.Delta.Content
			}
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case s.Err() == nil:
			served++
		case text == "":
			lost++
			t.Errorf("request %d failed before it streamed any text: %v", i, s.Err())
		default:
			cut++ // it was streaming from a when a died
		}
	}
	i := 0
	for waiting := true; waiting; i++ {
		n := i
		wg.Go(func() { run(n) })
		select {
		case <-a.streaming:
			waiting = false
		case <-time.After(20 * time.Millisecond):
			if i > 64 {
				t.Fatal("no request streamed from a")
			}
		}
	}
	a.Kill()
	close(a.stall)
	for range 16 {
		n := i
		wg.Go(func() { run(n) })
		i++
	}
	wg.Wait()
	t.Logf("%d requests: %d served, %d cut mid-stream when a died, %d lost", i, served, cut, lost)
	if cut == 0 || served != i-cut {
		t.Errorf("%d requests: %d served, %d cut", i, served, cut)
	}
}
