package inference

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/internal/upstream"
)

// Errors of remote models (catalog.Model.Remote), which an *UpstreamError
// wraps.
var (
	// ErrUpstream: the model's upstream failed or answered what the
	// engine cannot read (a 502 for HTTP clients).
	ErrUpstream = errors.New("inference: upstream failed")
	// ErrUnavailable: none of the upstream's replicas can take the
	// request now (all down, or all overloaded); retry after
	// UpstreamError.RetryAfter (a 503).
	ErrUnavailable = errors.New("inference: upstream unavailable")
)

// UpstreamError is the failure of a remote model's upstream. Its Message
// is the upstream's text as data, cut and cleaned of control characters.
type UpstreamError struct {
	// Status is the upstream's HTTP status; 0 when no replica answered.
	Status  int
	Message string
	// RetryAfter is when to retry, for ErrUnavailable.
	RetryAfter time.Duration
	// Err is ErrUpstream, ErrUnavailable or ErrInvalidRequest (the
	// upstream refused the request as invalid: a 400 or 422).
	Err error
}

func (e *UpstreamError) Error() string {
	if e.Status == 0 {
		return e.Err.Error() + ": " + e.Message
	}
	return fmt.Sprintf("%v: upstream status %d: %s", e.Err, e.Status, e.Message)
}

// Unwrap returns Err.
func (e *UpstreamError) Unwrap() error { return e.Err }

// remoteModel is a model that an upstream runs.
type remoteModel struct {
	pool *upstream.Pool
	name string // the upstream's name of the model
}

// RemoteBackend is ModelInfo.Backend of a remote model
// (catalog.Model.Remote).
const RemoteBackend = "remote"

// remoteTokenBytes is the estimate of a remote model's prompt: a token
// per 4 bytes of text, and remoteMessageTokens per message for the chat
// template's markup. The upstream's usage settles the real count.
const (
	remoteTokenBytes    = 4
	remoteMessageTokens = 8
)

// affinityBytes is how much of a request's conversation picks its
// replica: requests that begin alike go to one replica, whose prefix
// cache then serves them.
const affinityBytes = 2048

// newRemote makes the model of a remote catalog entry.
func (e *Engine) newRemote(entry catalog.Model) (*model, error) {
	r := entry.Remote
	pool, err := upstream.New(upstream.Config{URLs: r.URLs, Key: r.Key,
		HealthInterval: e.cfg.RemoteHealthInterval, Logger: e.cfg.Logger})
	if err != nil {
		return nil, err
	}
	ctxLen := cmp.Or(r.ContextLength, catalog.DefaultRemoteContext)
	m := &model{remote: &remoteModel{pool: pool, name: cmp.Or(r.Model, entry.ID)}}
	m.info = ModelInfo{Backend: RemoteBackend, ContextLength: ctxLen, TrainContext: ctxLen, WebSearch: e.cfg.Search != nil}
	return m, nil
}

// remoteOnly is the error of a call that a remote model cannot serve.
func remoteOnly(name, what string) error {
	return fmt.Errorf("%w: model %q runs on a remote engine (catalog.Model.Remote), which %s", ErrInvalidRequest, name, what)
}

// estimateTokens is the stated estimate of a remote request's prompt.
func estimateTokens(req Request) int {
	n := 0
	for _, m := range req.Messages {
		n += remoteMessageTokens + (len(m.Reasoning)+len(m.ToolCallID)+len(m.Name))/remoteTokenBytes
		for _, p := range m.Content {
			n += (len(p.Text) + remoteTokenBytes - 1) / remoteTokenBytes
		}
		for _, c := range m.ToolCalls {
			n += (len(c.Name) + len(c.Arguments) + remoteTokenBytes - 1) / remoteTokenBytes
		}
	}
	for _, t := range req.shownTools() {
		n += remoteMessageTokens + (len(t.Name)+len(t.Description)+len(t.Parameters))/remoteTokenBytes
	}
	return n
}

// remotePlan is the upstream request of a prepared remote request.
type remotePlan struct {
	body   upstream.ChatRequest
	prefix string // what picks the replica (affinityBytes)
}

// prepareRemote checks req for a remote model and makes its upstream
// request: every field is sent or refused by name.
func (m *model) prepareRemote(req Request) (*Prepared, error) {
	refuse := func(field, why string) error {
		return fieldError(Field(field), "the model runs on a remote engine, which %s", why)
	}
	if _, err := samplerParams(req); err != nil {
		return nil, err
	}
	switch {
	case len(req.Messages) == 0:
		return nil, refuse("Prompt", "renders its own chat template: send Messages")
	case req.PromptLogprobs:
		return nil, refuse("PromptLogprobs", "returns no log-probabilities of the prompt")
	case req.PromptOnly:
		return nil, refuse("PromptOnly", "generates at least one token")
	case req.IgnoreEOS:
		return nil, refuse("IgnoreEOS", "always stops at the end of the turn")
	case req.Speculative != nil && *req.Speculative:
		return nil, refuse("Speculative", "drafts, or not, on its own")
	case req.Choices > 1:
		return nil, refuse("Choices", "answers one choice per request")
	case req.Choices < 0 || req.Choices > MaxChoices:
		return nil, fieldError(Field("Choices"), "%d is not within 1 to %d", req.Choices, MaxChoices)
	case req.TopLogprobs < 0 || req.TopLogprobs > MaxTopLogprobs:
		return nil, fieldError(Field("TopLogprobs"), "%d is not within 0 to %d", req.TopLogprobs, MaxTopLogprobs)
	case req.TopLogprobs > 0 && !req.Logprobs:
		return nil, fieldError(Field("TopLogprobs"), "needs Logprobs")
	case req.ThinkingBudget < 0:
		return nil, fieldError(Field("ThinkingBudget"), "%d is negative", req.ThinkingBudget)
	case req.ThinkingBudget > 0 && req.Effort == "" && !req.ThinkingDefaults:
		// A budget beside an effort is the effort's (a wire format
		// derives one from the other): the effort goes upstream.
		return nil, refuse("ThinkingBudget", "takes no thinking budget (the chat API has none): set an effort")
	case req.Format != nil && req.Format.Grammar != "":
		return nil, refuse("Format.Grammar", "takes JSON and JSON schemas, not GBNF grammars")
	}
	switch req.Effort {
	case "", "low", "medium", "high":
	default:
		return nil, fieldError(Field("Effort"), "%q is not low, medium or high", req.Effort)
	}
	if err := checkSummary(req.Summary); err != nil {
		return nil, err
	}
	body := upstream.ChatRequest{Model: m.remote.name, Temperature: req.Temperature, TopP: req.TopP, TopK: req.TopK,
		MinP: req.MinP, Seed: req.Seed, Stop: req.Stop, Logprobs: req.Logprobs}
	if req.TopLogprobs > 0 {
		body.TopLogprobs = &req.TopLogprobs
	}
	if req.FrequencyPenalty != 0 {
		body.FrequencyPenalty = &req.FrequencyPenalty
	}
	if req.PresencePenalty != 0 {
		body.PresencePenalty = &req.PresencePenalty
	}
	if req.RepetitionPenalty != 0 && req.RepetitionPenalty != 1 {
		body.RepetitionPenalty = &req.RepetitionPenalty
	}
	// Thinking off is sent whether the caller or the wire's default
	// asked for it; an effort only when the caller did, since a default
	// sent as asked would be refused by an upstream whose model does not
	// think.
	switch {
	case req.NoThinking:
		body.ReasoningEffort = "none"
	case req.Effort != "" && !req.ThinkingDefaults:
		body.ReasoningEffort = req.Effort
	}
	var err error
	if body.ResponseFormat, err = remoteFormat(req.Format); err != nil {
		return nil, err
	}
	tools := req.shownTools()
	for i, t := range tools {
		if len(t.Parameters) > 0 && !json.Valid(t.Parameters) {
			return nil, fieldError(Field("Tools").At(i).Dot("Parameters"), "is not JSON")
		}
		body.Tools = append(body.Tools, upstream.Tool{Type: "function",
			Function: upstream.Function{Name: t.Name, Description: stripMarks(t.Description), Parameters: t.Parameters}})
	}
	switch req.ToolChoice.Mode {
	case ToolAuto, ToolNone:
		// Auto is the API's default; none shows no tools.
	case ToolRequired:
		if len(tools) == 0 {
			return nil, fieldError(Field("ToolChoice"), "%q without tools", req.ToolChoice.Mode)
		}
		body.ToolChoice = "required"
	case ToolFunction:
		if len(tools) == 0 {
			return nil, fieldError(Field("ToolChoice"), "%q without tools", req.ToolChoice.Mode)
		}
		body.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": req.ToolChoice.Name}}
	default:
		return nil, fieldError(Field("ToolChoice"), "mode %q", req.ToolChoice.Mode)
	}
	if req.ToolChoice.Single && len(tools) > 0 {
		f := false
		body.ParallelToolCalls = &f
	}
	for i, msg := range req.Messages {
		wm, err := remoteMessage(msg)
		if err != nil {
			return nil, fieldError(Field("Messages").At(i), "%v", err)
		}
		body.Messages = append(body.Messages, wm)
	}
	inputs := estimateTokens(req)
	limit := m.info.ContextLength
	maxTokens := req.MaxTokens
	if room := limit - inputs; maxTokens == 0 || req.ClampMaxTokens && maxTokens > room {
		maxTokens = room
	}
	switch {
	case inputs >= limit:
		return nil, &FieldError{Path: Field("Messages"), Err: ErrContextLength,
			Reason: fmt.Sprintf("about %d prompt tokens (an estimate) leave no room in the context of %d", inputs, limit)}
	case inputs+maxTokens > limit:
		return nil, &FieldError{Path: Field("MaxTokens"), Err: ErrContextLength,
			Reason: fmt.Sprintf("about %d prompt tokens (an estimate) and %d to generate, more than the context of %d", inputs, maxTokens, limit)}
	}
	if req.MaxTokens > 0 {
		body.MaxTokens = &maxTokens
	}
	prefix, _ := json.Marshal(body.Messages)
	if len(prefix) > affinityBytes {
		prefix = prefix[:affinityBytes]
	}
	return &Prepared{Request: req, InputTokens: inputs, MaxOutputTokens: maxTokens,
		plan: &plan{remote: &remotePlan{body: body, prefix: string(prefix)}}}, nil
}

// remoteFormat is the response_format of a Format.
func remoteFormat(f *Format) (*upstream.ResponseFormat, error) {
	switch {
	case f == nil:
		return nil, nil
	case len(f.Schema) > 0:
		var v map[string]any
		if err := json.Unmarshal(f.Schema, &v); err != nil {
			return nil, fieldError(Field("Format").Dot("Schema"), "is not a JSON object")
		}
		return &upstream.ResponseFormat{Type: "json_schema", JSONSchema: &upstream.JSONSchema{Name: "answer", Schema: f.Schema, Strict: true}}, nil
	case f.JSON:
		return &upstream.ResponseFormat{Type: "json_object"}, nil
	}
	return nil, nil
}

// remoteMessage is a message as the chat API sends it. Literal's marks
// are taken out: the upstream reads the text as data on its own.
func remoteMessage(msg Message) (upstream.Message, error) {
	var text strings.Builder
	for _, p := range msg.Content {
		if p.Image != nil || p.URL != "" {
			return upstream.Message{}, errors.New("holds an image: the model runs on a remote engine, and images are not sent to it")
		}
		text.WriteString(stripMarks(p.Text))
	}
	switch msg.Role {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
	default:
		return upstream.Message{}, fmt.Errorf("role %q", msg.Role)
	}
	wm := upstream.Message{Role: string(msg.Role), Content: text.String(), ReasoningContent: stripMarks(msg.Reasoning),
		ToolCallID: msg.ToolCallID, Name: msg.Name}
	for _, c := range msg.ToolCalls {
		wm.ToolCalls = append(wm.ToolCalls, upstream.ToolCall{ID: c.ID, Type: "function",
			Function: upstream.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
	}
	return wm, nil
}

// runRemote streams a prepared remote request from its upstream; done,
// if not nil, runs when it ends.
func (e *Engine) runRemote(ctx context.Context, m *model, p *Prepared, done func(), yield func(Event, error) bool) {
	if done != nil {
		defer done()
	}
	start := time.Now()
	var first time.Time
	var res Result
	var text, reasoning strings.Builder
	type call struct{ id, name, args string }
	var calls []*call
	var usage *upstream.Usage
	finish, stopReason := "", ""
	pieces, size := 0, 0
	for c, err := range m.remote.pool.Chat(ctx, p.plan.remote.body, p.plan.remote.prefix) {
		if err != nil {
			yield(Event{}, remoteError(err))
			return
		}
		if c.Usage != nil {
			usage = c.Usage
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue
			}
			if first.IsZero() {
				first = time.Now()
			}
			d := ch.Delta
			ev := Event{Text: d.Content, Reasoning: d.ReasoningContent + d.Reasoning}
			for _, td := range d.ToolCalls {
				if td.Index < 0 || td.Index > len(calls) || td.Index >= maxRemoteCalls {
					yield(Event{}, &UpstreamError{Status: http.StatusOK, Err: ErrUpstream, Message: fmt.Sprintf("a tool call numbered %d out of order", td.Index)})
					return
				}
				if td.Index == len(calls) {
					calls = append(calls, &call{})
				}
				cl := calls[td.Index]
				cl.id, cl.name = cmp.Or(cl.id, td.ID), cl.name+td.Function.Name
				cl.args += td.Function.Arguments
				if len(cl.args) > maxRemoteCallBytes {
					yield(Event{}, &UpstreamError{Status: http.StatusOK, Err: ErrUpstream, Message: fmt.Sprintf("a tool call's arguments longer than %d bytes", maxRemoteCallBytes)})
					return
				}
			}
			if ch.Logprobs != nil {
				ev.Logprobs = remoteLogprobs(ch.Logprobs.Content)
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
				if s, ok := ch.StopReason.(string); ok {
					stopReason = s
				}
			}
			if ev.Text == "" && ev.Reasoning == "" && len(ev.Logprobs) == 0 {
				continue
			}
			pieces++
			if size += len(ev.Text) + len(ev.Reasoning); pieces > 2*p.MaxOutputTokens+remoteSlack || size > remoteBytesPerToken*(p.MaxOutputTokens+remoteSlack) {
				// An upstream that ignores max_tokens is cut, not followed.
				yield(Event{}, &UpstreamError{Status: http.StatusOK, Err: ErrUpstream,
					Message: fmt.Sprintf("the upstream went on past the output limit of %d tokens", p.MaxOutputTokens)})
				return
			}
			text.WriteString(ev.Text)
			reasoning.WriteString(ev.Reasoning)
			res.Logprobs = append(res.Logprobs, ev.Logprobs...)
			if !yield(ev, nil) {
				return
			}
		}
	}
	var out []ToolCall
	for _, cl := range calls {
		args := cmp.Or(strings.TrimSpace(cl.args), "{}")
		var obj map[string]any
		if cl.name == "" || json.Unmarshal([]byte(args), &obj) != nil {
			yield(Event{}, &UpstreamError{Status: http.StatusOK, Err: ErrUpstream, Message: fmt.Sprintf("a tool call %q whose arguments are not a JSON object", cl.name)})
			return
		}
		out = append(out, ToolCall{ID: cmp.Or(cl.id, "call_"+rand.Text()), Name: cl.name, Arguments: args})
	}
	if len(out) > 0 && !yield(Event{ToolCalls: slices.Clone(out)}, nil) { // a consumer may edit its slice
		return
	}
	res.Text, res.Reasoning, res.ToolCalls = text.String(), reasoning.String(), out
	switch {
	case len(out) > 0:
		res.FinishReason = FinishToolCalls
	case finish == "length":
		res.FinishReason = FinishLength
	case stopReason != "" && slices.Contains(p.Request.Stop, stopReason):
		res.FinishReason, res.StopSequence = FinishStopSequence, stopReason
	default:
		res.FinishReason = FinishStop
	}
	res.StopToken = -1
	if usage != nil {
		res.Usage = Usage{PromptTokens: usage.PromptTokens, CompletionTokens: usage.CompletionTokens}
		if d := usage.PromptTokensDetails; d != nil {
			res.Usage.CachedTokens = d.CachedTokens
		}
		if d := usage.CompletionTokensDetails; d != nil {
			res.Usage.ReasoningTokens = d.ReasoningTokens
		}
	} else {
		// An upstream that reports no usage: the estimate, and a token
		// per piece it streamed.
		res.Usage = Usage{PromptTokens: p.InputTokens, CompletionTokens: pieces}
	}
	now := time.Now()
	if first.IsZero() {
		first = now
	}
	res.Timings = Timings{Prefill: first.Sub(start), Decode: now.Sub(first)}
	yield(Event{Final: &res}, nil)
}

// Bounds on what a remote model's upstream sends: its tool calls, and
// its output, past which it is cut (an upstream that ignores max_tokens
// would otherwise stream without end): twice the output limit in
// pieces, remoteBytesPerToken bytes a token, each with remoteSlack
// tokens to spare.
const (
	remoteSlack         = 64
	remoteBytesPerToken = 64

	maxRemoteCalls     = 128
	maxRemoteCallBytes = 1 << 20
)

// remoteLogprobs are an upstream's log-probabilities: tokens by their
// text, with no ids (Token -1).
func remoteLogprobs(in []upstream.TokenLogprob) []TokenLogprob {
	out := make([]TokenLogprob, len(in))
	for i, t := range in {
		out[i] = TokenLogprob{Token: -1, Bytes: tokenBytes(t.Token, t.Bytes), Logprob: min(t.Logprob, 0)}
		for _, top := range t.TopLogprobs {
			out[i].Top = append(out[i].Top, TopLogprob{Token: -1, Bytes: tokenBytes(top.Token, top.Bytes), Logprob: min(top.Logprob, 0)})
		}
	}
	return out
}

// tokenBytes are a token's bytes, as the upstream gave them or as its
// text.
func tokenBytes(text string, bytes []int) []byte {
	if len(bytes) == 0 {
		return []byte(text)
	}
	out := make([]byte, len(bytes))
	for i, b := range bytes {
		out[i] = byte(b)
	}
	return out
}

// remoteError is the engine's error for an upstream's.
func remoteError(err error) error {
	ue, ok := errors.AsType[*upstream.Error](err)
	if !ok {
		return err
	}
	out := &UpstreamError{Status: ue.Status, Message: ue.Message, RetryAfter: ue.RetryAfter, Err: ErrUpstream}
	switch {
	case ue.Status == 0 && ue.RetryAfter > 0,
		ue.Status == http.StatusTooManyRequests, ue.Status == http.StatusServiceUnavailable:
		out.Err, out.RetryAfter = ErrUnavailable, max(ue.RetryAfter, time.Second)
	case ue.Status == http.StatusBadRequest, ue.Status == http.StatusUnprocessableEntity, ue.Status == http.StatusRequestEntityTooLarge:
		out.Err = ErrInvalidRequest
	}
	return out
}
