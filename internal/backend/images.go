package backend

import (
	"fmt"

	"github.com/inferkit/inferkit/internal/bitmap"
)

// Projector turns images into rows of a model's input embeddings (a
// multimodal projector, an "mmproj" GGUF, loaded for one model). It is
// safe for concurrent use; its owner must call Close before the model's.
type Projector interface {
	// ImageTokens is the number of prompt tokens that Encode makes of
	// one image of width×height pixels, the model's own markers around
	// it included. It depends on the size alone: no picture is encoded.
	ImageTokens(width, height int) (int, error)
	// Encode encodes one decoded picture with the model's own markers
	// around it, in prompt order: text chunks (the markers' tokens) and
	// an image chunk. A picture that is no well-formed RGB fails with an
	// *ImageError.
	Encode(img *bitmap.RGB) ([]Chunk, error)
	// NonCausal says an image's tokens must be decoded together, in one
	// batch, with causal attention off (EmbeddingContext.SetCausal).
	NonCausal() bool
	Close()
}

// ProjectorLoader is a Model that reads images through a projector file.
type ProjectorLoader interface {
	// LoadProjector loads the projector at path for the model, encoding
	// with the given number of CPU threads (0: the backend's choice);
	// its caller closes it.
	LoadProjector(path string, threads int) (Projector, error)
}

// LoadProjector loads the projector at path for m: an error wrapping
// ErrUnsupported, naming images, when m's backend reads none.
func LoadProjector(m Model, path string, threads int) (Projector, error) {
	if l, ok := m.(ProjectorLoader); ok {
		return l.LoadProjector(path, threads)
	}
	return nil, Unsupported(m.Backend(), "images")
}

// Chunk is a piece of an encoded prompt: text tokens, or the embeddings
// of one image.
type Chunk struct {
	Tokens []Token
	// Image holds the rows of an image chunk; nil for text.
	Image *Embeddings
}

// Embeddings are the rows of an image's tokens in a model's input space.
// The zero value holds no rows.
type Embeddings struct {
	// Values holds Tokens() rows of Width floats each.
	Values []float32
	Width  int
	// Positions is how many positions the image takes in the sequence:
	// one per row, or on an M-RoPE model max(GridX, GridY).
	Positions int
	// GridX and GridY are the columns and rows of the image's tokens on
	// an M-RoPE model (EmbeddingBatch.AddGridEmbedding), row-major; 0
	// otherwise.
	GridX, GridY int
}

// Tokens is the number of rows.
func (e *Embeddings) Tokens() int {
	if e.Width == 0 {
		return 0
	}
	return len(e.Values) / e.Width
}

// Row returns the i-th row.
func (e *Embeddings) Row(i int) []float32 { return e.Values[i*e.Width : (i+1)*e.Width] }

// ImageError says which image could not be read.
type ImageError struct {
	Index int
	Err   error
}

func (e *ImageError) Error() string { return fmt.Sprintf("image %d: %v", e.Index, e.Err) }
func (e *ImageError) Unwrap() error { return e.Err }

// EmbeddingContext is a Context that decodes rows of input embeddings,
// such as an image's, besides tokens.
type EmbeddingContext interface {
	// NewEmbeddingBatch makes a batch of up to n rows for this context;
	// its caller closes it.
	NewEmbeddingBatch(n int) EmbeddingBatch
	// SetCausal turns causal attention on (the default) or off for the
	// next decodes: off while the image of a NonCausal Projector is
	// decoded.
	SetCausal(on bool)
}

// EmbeddingBatch is a Batch of rows of input embeddings rather than
// tokens; its Add fails. It is not safe for concurrent use; its owner
// must call Close.
type EmbeddingBatch interface {
	Batch
	// AddEmbedding appends one row at position pos of the sequences
	// seqs; logits asks for its output. It returns the row's index.
	AddEmbedding(row []float32, pos int, seqs []int, logits bool) (int, error)
	// AddGridEmbedding appends the row of an image on an M-RoPE model
	// whose cell is (y, x) in the image's grid: all of an image's rows
	// share the time position pos, the image's first.
	AddGridEmbedding(row []float32, pos, y, x int, seqs []int) (int, error)
}
