package decision_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
)

// The image entries a request may hold, and what they decode to.
func TestImageEntries(t *testing.T) {
	pic := []byte("\x89PNG\r\n\x1a\n-picture-bytes?>")
	std := base64.StdEncoding.EncodeToString(pic)
	for _, c := range []struct{ name, entry string }{
		{"bare base64", `"` + std + `"`},
		{"unpadded", `"` + base64.RawStdEncoding.EncodeToString(pic) + `"`},
		{"url-safe", `"` + base64.URLEncoding.EncodeToString(pic) + `"`},
		{"data URL", `"data:image/png;base64,` + std + `"`},
		{"data URL, upper case", `"DATA:IMAGE/PNG;BASE64,` + std + `"`},
		{"object url", `{"url": "data:image/jpeg;base64,` + std + `"}`},
		{"object data", `{"data": "` + std + `", "media_type": "image/png"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var im decision.Image
			if err := json.Unmarshal([]byte(c.entry), &im); err != nil {
				t.Fatal(err)
			}
			if string(im.Data) != string(pic) {
				t.Errorf("decoded %q", im.Data)
			}
			out, _ := json.Marshal(im)
			if string(out) != `"`+std+`"` {
				t.Errorf("marshalled %s", out)
			}
		})
	}
}

func TestImageValidation(t *testing.T) {
	ev, f := evaluator(t, decision.Config{Images: true})
	q := `, "questions": {"a": {"type": "noul"}}`
	ok := `"iVBORw0KGgo="`
	for _, c := range []struct{ name, req, param, msg string }{
		{"number", `{"model": "m", "state": "s"` + q + `, "images": [1]}`, "images[0]", "data URL"},
		{"remote URL", `{"model": "m", "state": "s"` + q + `, "images": [` + ok + `, "https://example.com/cat.png"]}`, "images[1]", "remote URLs are not fetched"},
		{"remote URL object", `{"model": "m", "state": "s"` + q + `, "images": [{"url": "http://example.com/cat.png"}]}`, "images[0]", "remote URLs"},
		{"bad base64", `{"model": "m", "state": "s"` + q + `, "images": [` + ok + `, "not base64!"]}`, "images[1]", "base64"},
		{"empty", `{"model": "m", "state": "s"` + q + `, "images": [""]}`, "images[0]", "empty"},
		{"text data URL", `{"model": "m", "state": "s"` + q + `, "images": ["data:text/plain;base64,aGk="]}`, "images[0]", "image/"},
		{"data URL without base64", `{"model": "m", "state": "s"` + q + `, "images": ["data:image/png,abc"]}`, "images[0]", "base64"},
		{"url and data", `{"model": "m", "state": "s"` + q + `, "images": [{"url": "data:image/png;base64,aGk=", "data": "aGk="}]}`, "images[0]", "one of"},
		{"data URL in data", `{"model": "m", "state": "s"` + q + `, "images": [{"data": "data:image/png;base64,aGk="}]}`, "images[0]", "url"},
		{"object of numbers", `{"model": "m", "state": "s"` + q + `, "images": [{"url": 5}]}`, "images[0]", "object"},
		{"marker in state", `{"model": "m", "state": "see ` + inference.ImageMarker + `"` + q + `, "images": [` + ok + `]}`, "state", inference.ImageMarker},
		{"five", `{"model": "m", "state": "s"` + q + `, "images": [` + strings.Repeat(ok+",", 4) + ok + `]}`, "images", "at most 4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ev.Evaluate(context.Background(), decode(t, c.req))
			de, ok := errors.AsType[*decision.Error](err)
			if !ok || de.Param != c.param || !strings.Contains(de.Message, c.msg) {
				t.Errorf("error %v, want one naming %q and saying %q", err, c.param, c.msg)
			}
		})
	}
	if len(f.calls) != 0 {
		t.Errorf("%d Score calls for invalid requests", len(f.calls))
	}
}

// The images reach the engine in order, each marked in the prompt before
// the state; without images the marker is plain text of the state.
func TestImagesInPrompt(t *testing.T) {
	ev, f := evaluator(t, decision.Config{Images: true})
	a, b := base64.StdEncoding.EncodeToString([]byte("first")), base64.StdEncoding.EncodeToString([]byte("second"))
	req := decode(t, `{"model": "m", "state": "the state", "questions": {"a": {"type": "noul"}, "b": {"type": "noul"}}, "images": ["`+a+`", "`+b+`"]}`)
	if _, err := ev.Evaluate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := f.calls[0]
	if len(got.Images) != 2 || string(got.Images[0]) != "first" || string(got.Images[1]) != "second" {
		t.Fatalf("images %q", got.Images)
	}
	if n := strings.Count(got.Prefix, inference.ImageMarker); n != 2 {
		t.Errorf("%d markers in the prefix %q", n, got.Prefix)
	}
	if strings.Index(got.Prefix, inference.ImageMarker) > strings.Index(got.Prefix, "the state") {
		t.Errorf("images after the state: %q", got.Prefix)
	}
	text, _ := evaluator(t, decision.Config{})
	if _, err := text.Evaluate(context.Background(), decode(t, `{"model": "m", "state": "a literal `+inference.ImageMarker+`", "questions": {"a": {"type": "noul"}}}`)); err != nil {
		t.Errorf("marker text in a state without images: %v", err)
	}
}

// The engine's complaint about an image names it.
func TestImageEngineError(t *testing.T) {
	ev, _ := evaluator(t, decision.Config{Images: true, Engine: imageRefuser{&fakeEngine{}}})
	req := decode(t, `{"model": "m", "state": "s", "questions": {"a": {"type": "noul"}}, "images": ["aGk=", "aGk="]}`)
	_, err := ev.Evaluate(context.Background(), req)
	de, ok := errors.AsType[*decision.Error](err)
	if !ok || de.Param != "images[1]" || de.Message != "is not a PNG, JPEG or GIF picture" {
		t.Errorf("error %v", err)
	}
}

type imageRefuser struct{ *fakeEngine }

func (imageRefuser) RunScore(context.Context, *inference.PreparedScore) (inference.ScoreResult, error) {
	return inference.ScoreResult{}, &inference.ImageError{Index: 1, Reason: "is not a PNG, JPEG or GIF picture"}
}
