package httpapi_test

import (
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/policy"
)

// A chat model's listing promises only what generation reads: images
// when the engine loaded a projector for it, whatever the catalog entry
// says (the spec's default entries say text and image).
func TestChatModalities(t *testing.T) {
	mini, _ := policy.Model(policy.Core25Mini)
	mini.Path = "/m/a.gguf"
	if !slices.Contains(mini.InputModalities, "image") {
		t.Fatal("the test wants a catalog entry that claims images")
	}
	textOnly := mini
	textOnly.InputModalities = []string{"text"}
	for name, c := range map[string]struct {
		entry  catalog.Model
		images bool
		want   []any
	}{
		"claims images, reads text":     {mini, false, []any{"text"}},
		"claims images, reads images":   {mini, true, []any{"text", "image"}},
		"claims text, reads images too": {textOnly, true, []any{"text", "image"}},
	} {
		t.Run(name, func(t *testing.T) {
			fake := newFake()
			fake.models[0].Images = c.images
			keys, _ := httpapi.NewStaticKeys("sk-test")
			h, err := httpapi.New(httpapi.Config{Engine: fake, Models: []catalog.Model{c.entry}, Keys: keys})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			_, list := call(t, srv, "GET", "/v1/models", "sk-test", "")
			_, one := call(t, srv, "GET", "/v1/models/"+policy.Core25Mini, "sk-test", "")
			for what, o := range map[string]any{"list": list["data"].([]any)[0], "one": one} {
				if got := o.(map[string]any)["input_modalities"]; !slices.Equal(got.([]any), c.want) {
					t.Errorf("%s: input_modalities %v, want %v", what, got, c.want)
				}
			}
		})
	}
}
