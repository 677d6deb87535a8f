//go:build cgo

package inference

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/bitmap/bitmaptest"
)

// An image decodes holding nothing that another request waits for (not
// the projector, which is locked to encode only): while one request's
// image is held mid-decode, another image request is served; the held one
// ends when its client leaves, and Close ends it rather than wait for it.
func TestImageDecodeBlocksNoOne(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(cancel context.CancelFunc, e *Engine)
		want error
	}{
		{"client leaves", func(cancel context.CancelFunc, _ *Engine) { cancel() }, context.Canceled},
		{"engine closes", func(_ context.CancelFunc, e *Engine) { e.Close() }, ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := imageEngine(t, Config{Parallel: 2})
			held := make(chan struct{})
			e.onDecode = func(ctx context.Context, img []byte) {
				if bytes.Equal(img, green) {
					close(held)
					<-ctx.Done() // as a long decode would run, reading until its context ends
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			scoreErr := make(chan error)
			go func() {
				_, err := e.Score(ctx, ScoreRequest{Model: "tiny", Prefix: ImageMarker, Images: [][]byte{green}, Branches: imageBranches})
				scoreErr <- err
			}()
			<-held
			// Another image request, scored and generated, meanwhile.
			scoreImages(t, e, "Look: "+ImageMarker, red)
			if _, err := e.Generate(context.Background(), imageMessage("Describe", red)); err != nil {
				t.Fatal(err)
			}
			tc.end(cancel, e)
			if err := <-scoreErr; !errors.Is(err, tc.want) {
				t.Fatalf("the held request ended with %v, want %v", err, tc.want)
			}
		})
	}
}

// The bombs are refused or decoded within bounds, through Prepare and Run
// and through Score: the scan bomb from its bytes when it is prepared,
// the zlib bomb (a 1×1 PNG, counted from its header) when it is decoded
// to run; the engine serves pictures afterwards.
func TestImageBombs(t *testing.T) {
	e, _ := imageEngine(t, Config{Parallel: 1})
	scan := bitmaptest.JPEG{Width: 4096, Height: 4096, Scans: 5000, Empty: true}.Bytes()
	zlib := bitmaptest.ZlibBomb(64 << 20)

	_, err := e.Prepare(context.Background(), imageMessage("Describe", scan))
	if fe, ok := errors.AsType[*FieldError](err); !ok || fe.Path.String() != "Messages[0]" || !strings.Contains(fe.Reason, "more than 10 times over") {
		t.Errorf("Prepare of the scan bomb: %v", err)
	}
	_, err = e.PrepareScore(ScoreRequest{Model: "tiny", Prefix: ImageMarker, Images: [][]byte{scan}, Branches: imageBranches})
	if ie, ok := errors.AsType[*ImageError](err); !ok || !strings.Contains(ie.Reason, "more than 10 times over") {
		t.Errorf("PrepareScore of the scan bomb: %v", err)
	}

	p, err := e.Prepare(context.Background(), imageMessage("Describe", zlib))
	if err != nil {
		t.Fatalf("Prepare of the zlib bomb, whose header reads: %v", err)
	}
	var runErr error
	for _, err := range e.Run(context.Background(), p) {
		if err != nil {
			runErr = err
		}
	}
	if fe, ok := errors.AsType[*FieldError](runErr); !ok || fe.Path.String() != "Messages" || !strings.Contains(fe.Reason, "image 0: the png cannot be decoded") {
		t.Errorf("Run of the zlib bomb: %v", runErr)
	}
	_, err = e.Score(context.Background(), ScoreRequest{Model: "tiny", Prefix: ImageMarker + ImageMarker, Images: [][]byte{red, zlib}, Branches: imageBranches})
	if ie, ok := errors.AsType[*ImageError](err); !ok || ie.Index != 1 || !strings.Contains(ie.Reason, "too much pixel data") {
		t.Errorf("Score of the zlib bomb: %v", err)
	}

	scoreImages(t, e, "Look: "+ImageMarker, red)
}
