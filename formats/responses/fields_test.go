package responses

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
	"github.com/openai/openai-go/v3/packages/respjson"
	oresponses "github.com/openai/openai-go/v3/responses"
)

// missingSDKFields returns the fields of the SDK object v (a struct with
// the SDK's JSON metadata) that the JSON it was decoded from did not
// have, by the SDK's own presence metadata (a Field whose Raw is empty),
// named by their JSON keys under path. Fields of nested SDK objects that
// were present and not null are checked in turn, except those named in
// skip (paths of fields that are not walked into).
func missingSDKFields(v reflect.Value, path string, skip []string) []string {
	var out []string
	meta := v.FieldByName("JSON")
	for i := range v.NumField() {
		f := v.Type().Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if key == "" || key == "-" || !f.IsExported() {
			continue
		}
		name := strings.TrimPrefix(path+"."+key, ".")
		field := meta.FieldByName(f.Name).Interface().(respjson.Field)
		if field.Raw() == respjson.Omitted {
			out = append(out, name)
			continue
		}
		if field.Raw() == respjson.Null || slices.Contains(skip, name) {
			continue
		}
		if fv := v.Field(i); fv.Kind() == reflect.Struct && fv.FieldByName("JSON").IsValid() && fv.FieldByName("JSON").Kind() == reflect.Struct {
			if _, ok := fv.FieldByName("JSON").Type().FieldByName("ExtraFields"); ok { // an object, not a union
				out = append(out, missingSDKFields(fv, name, skip)...)
			}
		}
	}
	return out
}

// notWalked are the fields of oresponses.Response whose own fields are not
// checked: the output items and tools (their goldens and SDK tests check
// them), the echoed text format and tool choice.
var notWalked = []string{"text", "tool_choice"}

// checkResponseObject decodes a response object with the SDK and checks
// that it has every field of the SDK's Response, of its usage (when
// done), its reasoning, error (when failed) and the other objects, and
// that only the fields that may be null are null.
func checkResponseObject(t *testing.T, name string, data []byte) oresponses.Response {
	t.Helper()
	var r oresponses.Response
	if err := r.UnmarshalJSON(data); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	skip := append([]string{}, notWalked...)
	if r.Error.JSON.Code.Valid() {
		skip = append(skip, "error") // misalignment is only for misalignment_policy_violation
		if r.Error.JSON.Code.Raw() == "" || r.Error.JSON.Message.Raw() == "" || r.Error.JSON.Param.Raw() == "" || r.Error.JSON.Type.Raw() == "" {
			t.Errorf("%s: error %s lacks a field", name, r.Error.RawJSON())
		}
	}
	if missing := missingSDKFields(reflect.ValueOf(r), "", skip); len(missing) > 0 {
		t.Errorf("%s lacks the SDK's fields %v", name, missing)
	}
	// The fields the SDK does not mark nullable are not null, but for
	// those the spec or the API makes null: error and incomplete_details
	// when there is none, instructions when none was given, usage until
	// the response is done, user when none was given, and
	// prompt_cache_options (see Response).
	mayBeNull := []string{"error", "incomplete_details", "instructions", "usage", "user", "prompt_cache_options"}
	v := reflect.ValueOf(r.JSON)
	for i := range reflect.TypeFor[oresponses.Response]().NumField() {
		f := reflect.TypeFor[oresponses.Response]().Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if key == "" || key == "-" || strings.Contains(f.Tag.Get("api"), "nullable") || slices.Contains(mayBeNull, key) {
			continue
		}
		if v.FieldByName(f.Name).Interface().(respjson.Field).Raw() == respjson.Null {
			t.Errorf("%s: %s is null", name, key)
		}
	}
	// completed_at is set exactly when the response completed.
	if (r.Status == "completed") != r.JSON.CompletedAt.Valid() {
		t.Errorf("%s: status %s with completed_at %s", name, r.Status, r.JSON.CompletedAt.Raw())
	}
	return r
}

// TestResponseFields checks every response object, blocking and streamed,
// against the SDK's Response type.
func TestResponseFields(t *testing.T) {
	objects := map[string][]byte{}
	for _, name := range []string{"response.json", "response_incomplete.json", "response_failed.json", "response_function_call.json", "response_text_function_call.json"} {
		objects[name] = formatstest.ReadGolden(t, name)
	}
	for _, name := range []string{"responses_stream.sse", "responses_stream_incomplete.sse", "responses_stream_failed.sse", "responses_stream_function_call.sse", "responses_stream_cancelled.sse"} {
		n := 0
		for _, f := range formatstest.SSEFrames(t, formatstest.ReadGolden(t, name)) {
			if f.Data == "[DONE]" {
				continue
			}
			var ev struct {
				Type     string
				Response json.RawMessage
			}
			if err := json.Unmarshal([]byte(f.Data), &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Response != nil {
				objects[name+" "+ev.Type] = ev.Response
				n++
			}
		}
		if want := 3 + strings.Count(name, "cancelled"); n != want { // created, (queued,) in_progress and the last
			t.Errorf("%s has %d response objects", name, n)
		}
	}
	for name, data := range objects {
		r := checkResponseObject(t, name, data)
		if r.CreatedAt != 1767225600 || r.Status == "completed" && r.CompletedAt != 1767225600 {
			t.Errorf("%s: created_at %v, completed_at %v", name, r.CreatedAt, r.CompletedAt)
		}
		if r.ServiceTier != "default" || r.Background != strings.Contains(name, "cancelled") || r.TopLogprobs != 0 || r.Truncation != "disabled" || r.JSON.MaxToolCalls.Valid() ||
			r.JSON.Conversation.Valid() || r.JSON.Prompt.Valid() || r.JSON.Moderation.Valid() {
			t.Errorf("%s: settings %s", name, data)
		}
	}
}

// TestResponseEchoesRequest checks that the response object echoes each
// parameter as applied, and the usage's split of the prompt.
func TestResponseEchoesRequest(t *testing.T) {
	body := `{"model":"core-2-5-pro","input":"hi","temperature":0.7,"top_p":0.9,"presence_penalty":0.5,"frequency_penalty":-0.25,
		"max_output_tokens":64,"max_tool_calls":3,"parallel_tool_calls":false,"tool_choice":"none","top_logprobs":0,
		"prompt_cache_key":"pk","safety_identifier":"sid","user":"u1","store":false,"background":false,"truncation":"disabled",
		"reasoning":{"effort":"low","summary":"detailed"},"text":{"format":{"type":"json_object"},"verbosity":"low"},
		"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"metadata":{"k":"v"},
		"instructions":"Be brief.","previous_response_id":"resp_0","include":["reasoning.encrypted_content"]}`
	req := formatstest.Parse(t, Parse, body)
	if req.PresencePenalty != 0.5 || req.FrequencyPenalty != -0.25 || *req.MaxToolCalls != 3 || req.PromptCacheKey != "pk" || req.SafetyIdentifier != "sid" {
		t.Fatalf("request %+v", req)
	}
	if ir := req.Inference(); ir.PresencePenalty != 0.5 || ir.FrequencyPenalty != -0.25 {
		t.Errorf("the engine gets penalties %v, %v", ir.PresencePenalty, ir.FrequencyPenalty)
	}
	res := inference.Result{Text: "{}", FinishReason: inference.FinishStop, Usage: inference.Usage{PromptTokens: 20, CachedTokens: 8, CompletionTokens: 3}}
	data := formatstest.JSON(t, NewResponse(req, res, formatstest.Options()))
	r := checkResponseObject(t, "echo", data)
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if r.Temperature != 0.7 || r.TopP != 0.9 || raw["presence_penalty"] != 0.5 || raw["frequency_penalty"] != -0.25 ||
		r.MaxOutputTokens != 64 || r.MaxToolCalls != 3 || r.ParallelToolCalls || r.ToolChoice.OfToolChoiceMode != "none" ||
		r.PromptCacheKey != "pk" || r.SafetyIdentifier != "sid" || r.User != "u1" || raw["store"] != false || r.Text.Format.Type != "json_object" ||
		r.Text.Verbosity != "low" || r.Reasoning.Effort != "low" || r.Reasoning.Summary != "detailed" || r.Reasoning.Mode != "standard" ||
		len(r.Tools) != 1 || r.Tools[0].Name != "f" || r.Metadata["k"] != "v" || r.Instructions.OfString != "Be brief." ||
		r.PreviousResponseID != "resp_0" || r.PromptCacheRetention != "in_memory" || r.PromptCacheDiagnostics.Type != "unavailable" ||
		r.AccessPrograms.Cyber != "standard" {
		t.Errorf("echo %s", data)
	}
	if u := r.Usage; u.InputTokens != 20 || u.InputTokensDetails.CachedTokens != 8 || u.InputTokensDetails.CacheWriteTokens != 12 ||
		u.OutputTokens != 3 || u.TotalTokens != 23 {
		t.Errorf("usage %+v", u)
	}
	// Unset, the optional echoes are null and the defaults are the spec's.
	r = checkResponseObject(t, "defaults", formatstest.JSON(t, NewResponse(formatstest.Parse(t, Parse, `{"model":"m","input":"hi"}`), res, formatstest.Options())))
	if r.JSON.MaxToolCalls.Valid() || r.JSON.PromptCacheKey.Valid() || r.JSON.SafetyIdentifier.Valid() || r.JSON.User.Valid() ||
		r.Temperature != 0.1 || r.TopP != 1 || r.MaxOutputTokens != 512 || !r.ParallelToolCalls || r.Reasoning.Effort != "medium" {
		t.Errorf("defaults %s", r.RawJSON())
	}
}

// TestResponsesRequestFields checks that each field the responses parser
// accepts is applied or refused with a 400 naming it: every JSON field
// of Request must have a case here.
func TestResponsesRequestFields(t *testing.T) {
	resp := func(extra string) string { return `{"model":"m","input":"hi"` + extra + `}` }
	type check func(formats.Request) bool
	cases := map[string]struct {
		ok      string // a body with the field, and what its Request must hold
		applied check
		bad     string // a body refused, with the param named
		param   string
	}{
		"model":                {resp(""), func(r formats.Request) bool { return r.Model == "m" }, `{"input":"hi"}`, "model"},
		"input":                {resp(""), func(r formats.Request) bool { return wire.JoinText(r.Messages[0].Content) == "hi" }, `{"model":"m"}`, "input"},
		"instructions":         {resp(`,"instructions":"x"`), func(r formats.Request) bool { return r.Instructions == "x" }, resp(`,"instructions":5`), "instructions"},
		"previous_response_id": {resp(`,"previous_response_id":"resp_1"`), func(r formats.Request) bool { return r.PreviousResponseID == "resp_1" }, resp(`,"previous_response_id":1`), "previous_response_id"},
		"max_output_tokens":    {resp(`,"max_output_tokens":9`), func(r formats.Request) bool { return r.MaxTokens == 9 }, resp(`,"max_output_tokens":0`), "max_output_tokens"},
		"stream":               {resp(`,"stream":true`), func(r formats.Request) bool { return r.Stream }, resp(`,"stream":"yes"`), "stream"},
		"reasoning":            {resp(`,"reasoning":{"effort":"low"}`), func(r formats.Request) bool { return r.Reasoning.Effort == "low" }, resp(`,"reasoning":{"effort":"max"}`), "reasoning.effort"},
		"temperature":          {resp(`,"temperature":0.5`), func(r formats.Request) bool { return *r.Temperature == 0.5 }, resp(`,"temperature":3`), "temperature"},
		"top_p":                {resp(`,"top_p":0.5`), func(r formats.Request) bool { return *r.TopP == 0.5 }, resp(`,"top_p":2`), "top_p"},
		"text":                 {resp(`,"text":{"format":{"type":"json_object"}}`), func(r formats.Request) bool { return r.Format.Type == "json" }, resp(`,"text":{"format":{"type":"xml"}}`), "text.format.type"},
		"store":                {resp(`,"store":false`), func(r formats.Request) bool { return !r.Store }, resp(`,"store":1`), "store"},
		"metadata":             {resp(`,"metadata":{"a":"b"}`), func(r formats.Request) bool { return r.Metadata["a"] == "b" }, resp(`,"metadata":{"a":1}`), "metadata.a"},
		"tools": {resp(`,"tools":[{"type":"function","name":"f"}]`), func(r formats.Request) bool { return r.Tools[0].Name == "f" },
			resp(`,"tools":[{"type":"file_search"}]`), "tools[0].type"},
		"tool_choice": {resp(`,"tool_choice":"none"`), func(r formats.Request) bool { return r.ToolChoice.Mode == "none" }, resp(`,"tool_choice":"sometimes"`), "tool_choice"},
		"parallel_tool_calls": {resp(`,"parallel_tool_calls":false`), func(r formats.Request) bool { return r.OneToolCall },
			resp(`,"parallel_tool_calls":"no"`), "parallel_tool_calls"},
		"user":       {resp(`,"user":"u"`), func(r formats.Request) bool { return r.User == "u" }, resp(`,"user":1`), "user"},
		"truncation": {resp(`,"truncation":"disabled"`), func(formats.Request) bool { return true }, resp(`,"truncation":"auto"`), "truncation"},
		"include": {resp(`,"include":["reasoning.encrypted_content","message.output_text.logprobs"]`), func(r formats.Request) bool { return r.Logprobs && r.TopLogprobs == 0 },
			resp(`,"include":["reasoning.encrypted_content","message.input_image.image_url"]`), "include[1]"},
		"background":         {resp(`,"background":true`), func(r formats.Request) bool { return r.Background && r.Store }, resp(`,"background":true,"store":false`), "background"},
		"top_logprobs":       {resp(`,"top_logprobs":2`), func(r formats.Request) bool { return r.Logprobs && r.TopLogprobs == 2 }, resp(`,"top_logprobs":21`), "top_logprobs"},
		"presence_penalty":   {resp(`,"presence_penalty":1`), func(r formats.Request) bool { return r.PresencePenalty == 1 }, resp(`,"presence_penalty":2.5`), "presence_penalty"},
		"frequency_penalty":  {resp(`,"frequency_penalty":-1`), func(r formats.Request) bool { return r.FrequencyPenalty == -1 }, resp(`,"frequency_penalty":-3`), "frequency_penalty"},
		"top_k":              {resp(`,"top_k":1`), func(r formats.Request) bool { return *r.TopK == 1 }, resp(`,"top_k":-1`), "top_k"},
		"seed":               {resp(`,"seed":7`), func(r formats.Request) bool { return *r.Seed == 7 }, resp(`,"seed":"x"`), "seed"},
		"stop":               {resp(`,"stop":["a","b"]`), func(r formats.Request) bool { return slices.Equal(r.Stop, []string{"a", "b"}) }, resp(`,"stop":["a",""]`), "stop[1]"},
		"repetition_penalty": {resp(`,"repetition_penalty":1.3`), func(r formats.Request) bool { return r.RepetitionPenalty == 1.3 }, resp(`,"repetition_penalty":3`), "repetition_penalty"},
		"max_tool_calls":     {resp(`,"max_tool_calls":2`), func(r formats.Request) bool { return *r.MaxToolCalls == 2 }, resp(`,"max_tool_calls":-1`), "max_tool_calls"},
		"prompt_cache_key":   {resp(`,"prompt_cache_key":"k"`), func(r formats.Request) bool { return r.PromptCacheKey == "k" }, resp(`,"prompt_cache_key":1`), "prompt_cache_key"},
		"safety_identifier": {resp(`,"safety_identifier":"s"`), func(r formats.Request) bool { return r.SafetyIdentifier == "s" },
			resp(`,"safety_identifier":"` + strings.Repeat("s", 129) + `"`), "safety_identifier"},
		"conversation": {resp(`,"conversation":null`), func(formats.Request) bool { return true }, resp(`,"conversation":"conv_1"`), "conversation"},
		"prompt":       {resp(`,"prompt":null`), func(formats.Request) bool { return true }, resp(`,"prompt":{"id":"pmpt_1"}`), "prompt"},
	}
	rt := reflect.TypeFor[Request]()
	for i := range rt.NumField() {
		key, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if _, ok := cases[key]; !ok {
			t.Errorf("ResponsesRequest accepts %s, which has no case here", key)
		}
	}
	for key, tc := range cases {
		r, err := Parse([]byte(tc.ok))
		if err != nil || !tc.applied(r) {
			t.Errorf("%s: %s gives %+v, %v", key, tc.ok, r, err)
		}
		_, err = Parse([]byte(tc.bad))
		if e := formats.ErrorOf(err); err == nil || e.Status != 400 || e.Param != tc.param {
			t.Errorf("%s: %s gives %v, want a 400 naming %s", key, tc.bad, err, tc.param)
		}
	}
}

// TestResponsesRequestRoundTrip checks that the parameters the response
// echoes survive the conversion back into a responses request.
func TestResponsesRequestRoundTrip(t *testing.T) {
	req := formatstest.Parse(t, Parse, `{"model":"m","input":"hi","presence_penalty":0.5,"frequency_penalty":-1,
		"max_tool_calls":0,"prompt_cache_key":"pk","safety_identifier":"sid"}`)
	b, err := formats.Marshal(NewRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	back := formatstest.Parse(t, Parse, string(b))
	if back.PresencePenalty != 0.5 || back.FrequencyPenalty != -1 || back.MaxToolCalls == nil || *back.MaxToolCalls != 0 ||
		back.PromptCacheKey != "pk" || back.SafetyIdentifier != "sid" {
		t.Errorf("%s reads back as %+v", b, back)
	}
}
