package embeddings

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/inference"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		body string
		want Canonical
	}{
		{`{"model":"m","input":"hello"}`, Canonical{Request: inference.EmbedRequest{Model: "m", Input: []string{"hello"}}}},
		{`{"model":"m","input":["a","b"],"encoding_format":"base64"}`, Canonical{Request: inference.EmbedRequest{Model: "m", Input: []string{"a", "b"}}, Base64: true}},
		{`{"model":"m","input":[1,2,3],"encoding_format":"float","dimensions":8}`, Canonical{Request: inference.EmbedRequest{Model: "m", Tokens: [][]int{{1, 2, 3}}, Dimensions: 8}}},
		{`{"model":"m","input":[[1],[2,3]],"user":"u"}`, Canonical{Request: inference.EmbedRequest{Model: "m", Tokens: [][]int{{1}, {2, 3}}}, User: "u"}},
	} {
		got, err := Parse([]byte(c.body))
		if err != nil {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.body, got, c.want)
		}
	}
	many := `{"model":"m","input":[` + strings.Repeat(`"x",`, inference.MaxEmbedInputs) + `"x"]}`
	for _, c := range []struct {
		body, param, code string
	}{
		{`{"input":"a"}`, "model", "missing_required_parameter"},
		{`{"model":"m"}`, "input", "missing_required_parameter"},
		{`{"model":"m","input":null}`, "input", "missing_required_parameter"},
		{`{"model":"m","input":[]}`, "input", "invalid_value"},
		{`{"model":"m","input":""}`, "input", "invalid_value"},
		{`{"model":"m","input":["a",""]}`, "input[1]", "invalid_value"},
		{`{"model":"m","input":[[1],[]]}`, "input[1]", "invalid_value"},
		{`{"model":"m","input":3}`, "input", "invalid_type"},
		{`{"model":"m","input":{"a":1}}`, "input", "invalid_type"},
		{`{"model":"m","input":["a",1]}`, "input[1]", "invalid_type"},
		{`{"model":"m","input":[1,"a"]}`, "input[1]", "invalid_type"},
		{`{"model":"m","input":[1.5]}`, "input[0]", "invalid_type"},
		{`{"model":"m","input":[-1]}`, "input[0]", "invalid_value"},
		{`{"model":"m","input":[[1],[2,99999999999]]}`, "input[1][1]", "invalid_value"},
		{`{"model":"m","input":[[1],"a"]}`, "input[1]", "invalid_type"},
		{`{"model":"m","input":[true]}`, "input[0]", "invalid_type"},
		{`{"model":"m","input":"a","encoding_format":"int8"}`, "encoding_format", "invalid_value"},
		{`{"model":"m","input":"a","dimensions":0}`, "dimensions", "invalid_value"},
		{`{"model":"m","input":"a","dimensions":"8"}`, "dimensions", "invalid_type"},
		{many, "input", "invalid_value"},
		{`{"model":"m","input":"a"`, "", "invalid_json"},
	} {
		_, err := Parse([]byte(c.body))
		var re *formats.RequestError
		if !errors.As(err, &re) || re.Param != c.param || re.Code != c.code {
			t.Errorf("%.60s: %v (%+v), want param %q code %q", c.body, err, re, c.param, c.code)
		}
	}
}

func TestVectorBase64(t *testing.T) {
	v := Vector{Values: []float32{1, -0.5, float32(math.Pi)}, Base64: true}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	// 1.0 is 00 00 80 3f little-endian; -0.5 is 00 00 00 bf.
	if !strings.HasPrefix(string(b), `"AACAPwAAAL`) {
		t.Errorf("base64 %s", b)
	}
	var back Vector
	if err := json.Unmarshal(b, &back); err != nil || !slices.Equal(back.Values, v.Values) || !back.Base64 {
		t.Errorf("round trip %+v, %v", back, err)
	}
	var floats Vector
	if err := json.Unmarshal([]byte(`[0.25,1]`), &floats); err != nil || !slices.Equal(floats.Values, []float32{0.25, 1}) || floats.Base64 {
		t.Errorf("floats %+v, %v", floats, err)
	}
}

// embedResult is the result the embeddings goldens are made of.
var embedResult = inference.EmbedResult{
	Embeddings: [][]float32{{0.6, -0.8, 0}, {0.125, 0.25, -0.9601}},
	Usage:      inference.Usage{PromptTokens: 11},
}

func TestGoldenEmbeddings(t *testing.T) {
	req, err := Parse([]byte(`{"model":"core-embed","input":["a b c","d e f g"]}`))
	if err != nil {
		t.Fatal(err)
	}
	formatstest.Golden(t, "embeddings.json", formatstest.JSON(t, NewResponse(req, embedResult)))
	req.Base64 = true
	formatstest.Golden(t, "embeddings_base64.json", formatstest.JSON(t, NewResponse(req, embedResult)))
	// An embedding model as GET /v1/models/{id} shows it.
	m := catalog.Model{ID: "core-embed", Path: "e.gguf", Kind: catalog.KindEmbedding, MinDimensions: 32, Created: 1767225600,
		Name: "Core Embed", Pricing: catalog.Pricing{Prompt: "0.00000002"}}
	o := m.Object(8192)
	o.Dimensions = 1024
	formatstest.Golden(t, "model_embedding.json", formatstest.JSON(t, o))
	// The engine's errors name the wire's parameter.
	for name, err := range map[string]error{
		"embed_token":      &inference.FieldError{Path: inference.Field("Input").At(2).At(7), Reason: "token 999999 is not in the model's vocabulary of 151936 tokens"},
		"embed_too_long":   &inference.FieldError{Path: inference.Field("Input").At(1), Err: inference.ErrContextLength, Reason: "more than 510 tokens; this model embeds at most 512 an input, special tokens included"},
		"embed_dimensions": &inference.FieldError{Path: inference.Field("Dimensions"), Reason: "2048; this model's vectors have 1024, so want 1 to 1024"},
	} {
		rec := httptest.NewRecorder()
		formats.WriteError(rec, formats.StyleChat, Error(err))
		formatstest.Golden(t, "error_"+name+"_chat.txt", []byte(fmt.Sprintf("HTTP %d\n\n%s\n", rec.Code, rec.Body.Bytes())))
	}
}

// FuzzRequest feeds arbitrary bodies to the embeddings parser:
// it must return within parseBound without panicking, be deterministic,
// fail only with a *formats.RequestError of a documented code whose param (when
// set) starts with a field of the request and appears in its message,
// and on success return a request the engine's bounds accept in shape
// (1 to MaxEmbedInputs inputs, none empty, token ids non-negative),
// which reads back the same after Request writes it.
func FuzzRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"m","input":"hello"}`,
		`{"model":"m","input":["a","b"],"encoding_format":"base64","dimensions":4}`,
		`{"model":"m","input":[1,2,3]}`,
		`{"model":"m","input":[[1],[2,3]]}`,
		`{"model":"m","input":[[1],"a"]}`,
		`{"model":"m","input":[]}`,
		`{"model":"m","input":[1e3]}`,
		`{"model":"m","input":[[-1]]}`,
		`{"model":"m","input":"a","dimensions":-3}`,
		`[]`, `null`, ``,
	} {
		f.Add([]byte(seed))
	}
	fields := map[string]bool{}
	for i := range reflect.TypeFor[Request]().NumField() {
		name, _, _ := strings.Cut(reflect.TypeFor[Request]().Field(i).Tag.Get("json"), ",")
		fields[name] = true
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		start := time.Now()
		got, err := Parse(body)
		if d := time.Since(start); d > parseBound {
			t.Fatalf("parse took %v", d)
		}
		again, err2 := Parse(body)
		if !reflect.DeepEqual(got, again) || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("not deterministic: %+v %v, then %+v %v", got, err, again, err2)
		}
		if err != nil {
			var re *formats.RequestError
			if !errors.As(err, &re) {
				t.Fatalf("error %T %v", err, err)
			}
			switch re.Code {
			case "invalid_value", "invalid_type", "missing_required_parameter", "invalid_json":
			default:
				t.Fatalf("code %q", re.Code)
			}
			if re.Param != "" {
				head, _, _ := strings.Cut(strings.SplitN(re.Param, "[", 2)[0], ".")
				if !fields[head] || !strings.Contains(re.Message, re.Param) {
					t.Fatalf("param %q, message %q", re.Param, re.Message)
				}
			}
			return
		}
		r := got.Request
		n := len(r.Input) + len(r.Tokens)
		if r.Model == "" || n < 1 || n > inference.MaxEmbedInputs || (r.Input != nil && r.Tokens != nil) || r.Dimensions < 0 {
			t.Fatalf("accepted %+v", got)
		}
		for _, s := range r.Input {
			if s == "" {
				t.Fatal("an empty text accepted")
			}
		}
		for _, ids := range r.Tokens {
			if len(ids) == 0 || slices.Min(ids) < 0 {
				t.Fatalf("token array %v accepted", ids)
			}
		}
		wire := Request{Model: r.Model, Input: Input{Texts: r.Input, Tokens: r.Tokens}}
		if got.Base64 {
			wire.EncodingFormat = "base64"
		}
		if r.Dimensions > 0 {
			wire.Dimensions = &r.Dimensions
		}
		b, err := json.Marshal(wire)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(b)
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Fatalf("round trip of %s: %+v %v, want %+v", b, back, err, got)
		}
	})
}

// TestError names the engine's fields as the wire does, every index in
// its place.
func TestError(t *testing.T) {
	for key, name := range names {
		if strings.Count(key, "[]") != strings.Count(name, "[]") {
			t.Errorf("%q names %q", key, name)
		}
	}
	for _, tt := range []struct {
		p    inference.Path
		want string
	}{
		{inference.Field("Input"), "input: bad"},
		{inference.Field("Input").At(4), "input[4]: bad"},
		{inference.Field("Input").At(4).At(1), "input[4][1]: bad"},
		{inference.Field("Dimensions"), "dimensions: bad"},
	} {
		e := Error(&inference.FieldError{Path: tt.p, Reason: "bad"})
		if param, _, _ := strings.Cut(tt.want, ":"); e.Message != tt.want || e.Param != param || e.Status != 400 {
			t.Errorf("%s: %d %q %q, want %q", tt.p, e.Status, e.Param, e.Message, tt.want)
		}
	}
}
