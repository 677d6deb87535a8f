package httpapi_test

import (
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
)

// A chat model's listing promises only what generation reads: the spec's
// default entries say text and image, and generation reads text.
func TestChatModalities(t *testing.T) {
	mini, _ := catalog.Defaults(catalog.Core25Mini)
	mini.Path = "/m/a.gguf"
	if !slices.Contains(mini.InputModalities, "image") {
		t.Fatal("the test wants a catalog entry that claims images")
	}
	keys, _ := httpapi.NewStaticKeys("sk-test")
	h, err := httpapi.New(httpapi.Config{Engine: newFake(), Models: []catalog.Model{mini}, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	_, list := call(t, srv, "GET", "/v1/models", "sk-test", "")
	_, one := call(t, srv, "GET", "/v1/models/"+catalog.Core25Mini, "sk-test", "")
	for what, o := range map[string]any{"list": list["data"].([]any)[0], "one": one} {
		if got := o.(map[string]any)["input_modalities"]; len(got.([]any)) != 1 || got.([]any)[0] != "text" {
			t.Errorf("%s: input_modalities %v, want [text]", what, got)
		}
	}
}
