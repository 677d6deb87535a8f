//go:build cgo

package tinyembed_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest/tinyembed"
)

func Example() {
	// In a test, tinyembed.Model(t) writes the file into t.TempDir().
	dir, err := os.MkdirTemp("", "tinyembed")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "embed.gguf")
	if err := tinyembed.Write(path); err != nil {
		log.Fatal(err)
	}
	eng, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "embed", Path: path, Kind: catalog.KindEmbedding}},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	query := "Karimo has a home in Tavolu."
	candidates := []string{"Karimo works in Tavolu.", "Misepa is where Karimo lives.", "Tavolu is where Karimo lives."}
	res, err := eng.Embed(context.Background(), inference.EmbedRequest{Model: "embed", Input: append([]string{query}, candidates...)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(candidates[tinyembed.Nearest(res.Embeddings[0], res.Embeddings[1:])])
	// Output: Tavolu is where Karimo lives.
}
