//go:build cgo

package tinychat_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest/tinychat"
)

func Example() {
	// In a test, tinychat.Model(t) writes the file into t.TempDir().
	dir, err := os.MkdirTemp("", "tinychat")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "chat.gguf")
	if err := tinychat.Write(path); err != nil {
		log.Fatal(err)
	}
	eng, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "tiny", Path: path}}, ContextTokens: 1024,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	zero := 0.0
	res, err := eng.Generate(context.Background(), inference.Request{Model: "tiny", Temperature: &zero, NoThinking: true,
		Messages: []inference.Message{
			inference.Text(inference.RoleUser, "My name is Karimo and I live in Lune."),
			inference.Text(inference.RoleAssistant, "Noted."),
			inference.Text(inference.RoleUser, "Where do I live?"),
		}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text)
	// Output: Lune.
}
