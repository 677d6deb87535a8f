//go:build cgo

package inference

import (
	"context"
	"errors"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

func imageMessage(text string, images ...[]byte) Request {
	msg := Message{Role: RoleUser, Content: []Part{{Text: text}}}
	for _, img := range images {
		msg.Content = append(msg.Content, Part{Image: img}, Part{Text: " and"})
	}
	zero := 0.0
	return Request{Model: "tiny", Messages: []Message{msg}, MaxTokens: 4, Temperature: &zero}
}

func TestGenerateWithImages(t *testing.T) {
	e, r := imageEngine(t, Config{Parallel: 1})
	plain, err := e.Prepare(context.Background(), imageMessage("Describe"))
	if err != nil {
		t.Fatal(err)
	}
	req := imageMessage("Describe", red, green)
	p, err := e.Prepare(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// Prepare counts each image's tokens, as the projector will make them,
	// without encoding them.
	extra := p.InputTokens - plain.InputTokens
	if extra < 2*imageTokensEach {
		t.Fatalf("two images added %d tokens, want at least %d", extra, 2*imageTokensEach)
	}
	res, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.PromptTokens != p.InputTokens || res.Usage.CompletionTokens == 0 {
		t.Fatalf("usage %+v, Prepare counted %d", res.Usage, p.InputTokens)
	}
	decoded := r.Stats().Decoded

	// The same images again come from the prompt cache; another image
	// does not.
	again, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Usage.CachedTokens != again.Usage.PromptTokens-1 {
		t.Errorf("the same request again: %+v", again.Usage)
	}
	other, err := e.Generate(context.Background(), imageMessage("Describe", green, red))
	if err != nil {
		t.Fatal(err)
	}
	if other.Usage.CachedTokens >= plain.InputTokens-1+imageTokensEach {
		t.Errorf("swapped images reused %d cached tokens, past the first image", other.Usage.CachedTokens)
	}
	if r.Stats().Decoded == decoded {
		t.Error("nothing decoded for other images")
	}

	// Request text that spells llama.cpp's image marker is text.
	marker, err := e.Prepare(context.Background(), imageMessage("Describe "+ImageMarker))
	if err != nil {
		t.Fatal(err)
	}
	if marker.InputTokens >= plain.InputTokens+imageTokensEach {
		t.Errorf("the marker's text became an image: %d tokens", marker.InputTokens)
	}
}

func TestGenerateImageErrors(t *testing.T) {
	e, _ := imageEngine(t, Config{})
	text := newTestEngine(t)
	for name, c := range map[string]struct {
		e   *Engine
		req Request
	}{
		"no projector": {text, imageMessage("x", red)},
		"not an image": {e, imageMessage("x", []byte("GIF89a? no"))},
		"not fetched":  {e, Request{Model: "tiny", Messages: []Message{{Role: RoleUser, Content: []Part{{URL: "https://example.com/a.png"}}}}}},
		"prompt logprobs": {e, func() Request {
			r := imageMessage("x", red)
			r.PromptLogprobs = true
			return r
		}()},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.e.Prepare(context.Background(), c.req)
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("error %v, want a FieldError", err)
			}
		})
	}
}

// newTestEngine serves "tiny" without a projector.
func newTestEngine(t *testing.T) *Engine {
	e, err := New(Config{Models: []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{})}}, Threads: 1, ContextTokens: 512})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
