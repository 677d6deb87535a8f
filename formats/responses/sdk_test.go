package responses

import (
	"context"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/formats/internal/formatstest"
	oresponses "github.com/openai/openai-go/v3/responses"
)

func TestSDKResponses(t *testing.T) {
	for _, tc := range []struct {
		golden, status, text string
		items                int
	}{
		{"response.json", "completed", formatstest.Thinking().Text, 2},
		{"response_incomplete.json", "incomplete", formatstest.Length().Text, 1},
	} {
		f, url := formatstest.ServeGolden(t, 200, tc.golden)
		r, err := formatstest.OpenAI(url).Responses.New(context.Background(), formatstest.ResponsesParams())
		if err != nil {
			t.Fatal(err)
		}
		req, err := Parse(f.Got)
		if err != nil {
			t.Fatalf("the SDK's request does not parse: %v\n%s", err, f.Got)
		}
		if req.MaxTokens != 300 || req.Instructions != "Be brief." || req.Store || req.Reasoning.Effort != "high" ||
			req.Format.Type != "json_schema" || req.Metadata["topic"] != "geo" || *req.Temperature != 0.3 {
			t.Errorf("request = %+v", req)
		}
		if string(r.Status) != tc.status || r.OutputText() != tc.text || len(r.Output) != tc.items || r.Usage.TotalTokens == 0 {
			t.Errorf("%s: response = %+v", tc.golden, r)
		}
		for name, field := range map[string]interface{ Valid() bool }{
			"id": r.JSON.ID, "created_at": r.JSON.CreatedAt, "model": r.JSON.Model, "output": r.JSON.Output,
			"parallel_tool_calls": r.JSON.ParallelToolCalls, "temperature": r.JSON.Temperature, "tool_choice": r.JSON.ToolChoice,
			"tools": r.JSON.Tools, "top_p": r.JSON.TopP, "metadata": r.JSON.Metadata, "usage": r.JSON.Usage,
		} {
			if !field.Valid() {
				t.Errorf("%s: %s is not a valid field for the SDK", tc.golden, name)
			}
		}
	}
	if r := formatstest.ReadGolden(t, "response.json"); true {
		var resp oresponses.Response
		if err := resp.UnmarshalJSON(r); err != nil {
			t.Fatal(err)
		}
		if rs := resp.Output[0].AsReasoning(); resp.Output[0].Type != "reasoning" || len(rs.Summary) != 1 || rs.Summary[0].Text != formatstest.Thinking().Summary ||
			len(rs.Content) != 0 || resp.Output[1].AsMessage().Content[0].Text != formatstest.Thinking().Text {
			t.Errorf("output = %+v", resp.Output)
		}
	}
}

func TestSDKResponsesStream(t *testing.T) {
	for _, tc := range []struct {
		golden, last, text string
	}{
		{"responses_stream.sse", "response.completed", formatstest.Thinking().Text},
		{"responses_stream_incomplete.sse", "response.incomplete", formatstest.Length().Text},
		{"responses_stream_failed.sse", "response.failed", ""},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			_, url := formatstest.ServeGolden(t, 200, tc.golden)
			s := formatstest.OpenAI(url).Responses.NewStreaming(context.Background(), formatstest.ResponsesParams())
			var last oresponses.ResponseStreamEventUnion
			var deltas strings.Builder
			seq := int64(0)
			for s.Next() {
				last = s.Current()
				if last.SequenceNumber != seq {
					t.Errorf("sequence_number %d, want %d", last.SequenceNumber, seq)
				}
				seq++
				if last.Type == "response.output_text.delta" {
					deltas.WriteString(last.Delta)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if last.Type != tc.last || last.Response.OutputText() != tc.text {
				t.Errorf("last event %s, output %q", last.Type, last.Response.OutputText())
			}
			if tc.text != "" && deltas.String() != tc.text {
				t.Errorf("deltas %q", deltas.String())
			}
			if tc.last == "response.failed" && last.Response.Error.Code != "server_error" {
				t.Errorf("failed response error %+v", last.Response.Error)
			}
		})
	}
}
