package rerank_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/rerank"
)

func TestParse(t *testing.T) {
	c, err := rerank.Parse([]byte(`{"model":"m","query":"q","documents":["a",{"text":"b"}],"top_n":5,"return_documents":false}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "m" || c.Query != "q" || strings.Join(c.Documents, ",") != "a,b" || c.TopN != 2 || c.ReturnDocuments {
		t.Errorf("canonical %+v", c)
	}
	c, err = rerank.Parse([]byte(`{"model":"m","query":"q","documents":["a","b","c"],"top_n":1}`))
	if err != nil || c.TopN != 1 || !c.ReturnDocuments {
		t.Errorf("top_n 1, return_documents absent: %+v %v", c, err)
	}
}

// Every refusal is a 400 that names the parameter at fault.
func TestParseErrors(t *testing.T) {
	long := strings.Repeat("x", rerank.MaxChars+1)
	many := `"a"` + strings.Repeat(`,"a"`, rerank.MaxDocuments)
	for _, tc := range []struct{ name, body, param string }{
		{"no model", `{"query":"q","documents":["a"]}`, "model"},
		{"no query", `{"model":"m","documents":["a"]}`, "query"},
		{"long query", `{"model":"m","query":"` + long + `","documents":["a"]}`, "query"},
		{"no documents", `{"model":"m","query":"q"}`, "documents"},
		{"empty documents", `{"model":"m","query":"q","documents":[]}`, "documents"},
		{"too many", `{"model":"m","query":"q","documents":[` + many + `]}`, "documents"},
		{"documents object", `{"model":"m","query":"q","documents":{"text":"a"}}`, "documents"},
		{"empty document", `{"model":"m","query":"q","documents":["a",""]}`, "documents[1]"},
		{"long document", `{"model":"m","query":"q","documents":["` + long + `"]}`, "documents[0]"},
		{"number document", `{"model":"m","query":"q","documents":["a",3]}`, "documents[1]"},
		{"object without text", `{"model":"m","query":"q","documents":[{"title":"a"}]}`, "documents[0].title"},
		{"object, no fields", `{"model":"m","query":"q","documents":[{}]}`, "documents[0].text"},
		{"text not a string", `{"model":"m","query":"q","documents":[{"text":1}]}`, "documents[0].text"},
		{"empty text", `{"model":"m","query":"q","documents":["a",{"text":""}]}`, "documents[1].text"},
		{"top_n 0", `{"model":"m","query":"q","documents":["a"],"top_n":0}`, "top_n"},
		{"top_n string", `{"model":"m","query":"q","documents":["a"],"top_n":"1"}`, "top_n"},
		{"return_documents string", `{"model":"m","query":"q","documents":["a"],"return_documents":"yes"}`, "return_documents"},
		{"rank_fields", `{"model":"m","query":"q","documents":["a"],"rank_fields":["text"]}`, "rank_fields"},
		{"max_tokens_per_doc", `{"model":"m","query":"q","documents":["a"],"max_tokens_per_doc":10}`, "max_tokens_per_doc"},
	} {
		_, err := rerank.Parse([]byte(tc.body))
		var re *formats.RequestError
		if !errors.As(err, &re) || re.Param != tc.param || !strings.Contains(re.Message, tc.param) && tc.param != "model" && tc.param != "query" && tc.param != "documents" {
			t.Errorf("%s: %v (%+v), want a RequestError naming %s", tc.name, err, re, tc.param)
		}
	}
	if _, err := rerank.Parse([]byte(`not json`)); err == nil {
		t.Error("malformed JSON accepted")
	}
}

// Results come most relevant first, ties in the request's order, cut at
// top_n, with their documents unless return_documents is false.
func TestNewResponse(t *testing.T) {
	c := rerank.Canonical{Model: "m", Documents: []string{"a", "b", "c", "d"}, TopN: 3, ReturnDocuments: true}
	res := rerank.NewResponse(c, []float64{0.1, 0.9, 0.5, 0.9}, 42)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	want := `"model":"m","results":[{"index":1,"relevance_score":0.9,"document":{"text":"b"}},{"index":3,"relevance_score":0.9,"document":{"text":"d"}},{"index":2,"relevance_score":0.5,"document":{"text":"c"}}],"usage":{"prompt_tokens":42,"total_tokens":42}}`
	if !strings.HasPrefix(res.ID, "rerank-") || res.Object != "list" || !strings.HasSuffix(string(b), want) {
		t.Errorf("response %s", b)
	}
	c.ReturnDocuments = false
	b, _ = json.Marshal(rerank.NewResponse(c, []float64{0.1, 0.9, 0.5, 0.9}, 42))
	if strings.Contains(string(b), "document") {
		t.Errorf("return_documents false: %s", b)
	}
}
