package llamacpp

/*
#include <stdlib.h>
#include "bridge.h"
#include "mtmd.h"
#include "mtmd-helper.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/bitmap"
)

// MediaMarker is the text that stands for one image in the text given to
// Projector.Tokenize.
const MediaMarker = "<__media__>"

// Projector is a multimodal projector (an "mmproj" GGUF) loaded for a text
// model through llama.cpp's mtmd: it turns images into embeddings in the
// model's input space. It is safe for concurrent use (encodes take turns).
// Its owner must call Close before closing the Model.
type Projector struct {
	mu        sync.Mutex
	c         *C.struct_mtmd_context
	model     *Model
	nonCausal bool
	// counts are ImageTokens' answers by image size, at most maxCounts.
	counts map[[2]int]int
}

// maxCounts bounds the image sizes whose token counts a Projector keeps;
// past it, the counts are forgotten and worked out again.
const maxCounts = 4096

// LoadProjector loads the projector at path for m, encoding with the given
// number of CPU threads (0: llama.cpp's choice).
func LoadProjector(path string, m *Model, threads int) (*Projector, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("llamacpp: projector: %w", err)
	}
	initBackend()
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	params := C.mtmd_context_params_default()
	params.use_gpu = false
	params.print_timings = false
	params.warmup = false
	if threads > 0 {
		params.n_threads = C.int(threads)
	}
	c := C.mtmd_init_from_file(cpath, m.c, params)
	if c == nil {
		return nil, fmt.Errorf("llamacpp: cannot load projector %s (see the debug log)", path)
	}
	p := &Projector{c: c, model: m, nonCausal: bool(C.mtmd_decode_use_non_causal(c))}
	switch {
	case !bool(C.mtmd_support_vision(c)):
		p.Close()
		return nil, fmt.Errorf("llamacpp: projector %s reads no images", path)
	case bool(C.mtmd_decode_use_mrope(c)) != m.MRoPE():
		// Each would place the image's tokens its own way.
		p.Close()
		return nil, fmt.Errorf("llamacpp: projector %s and the model disagree on M-RoPE positions", path)
	}
	return p, nil
}

// Close frees the projector.
func (p *Projector) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c != nil {
		C.inferkit_free_projector(p.c)
		p.c = nil
	}
}

// NonCausal says an image's tokens must be decoded together in one batch
// with causal attention off (Context.SetCausal), as Gemma 3 wants.
func (p *Projector) NonCausal() bool { return p.nonCausal }

// Chunk is a piece of a tokenized multimodal prompt: text tokens, or the
// embeddings of one image.
type Chunk = backend.Chunk

// Embeddings are the rows of an image's tokens in the model's input space.
type Embeddings = backend.Embeddings

// ImageError says which image could not be read.
type ImageError = backend.ImageError

// ErrImageFormat means that an image given to Tokenize is no RGB of the
// size it says.
var ErrImageFormat = errors.New("not a well-formed RGB image")

// Tokenize splits text at each MediaMarker, tokenizes the text between
// (special-token text parsed, no BOS added) and encodes the images, the
// i-th for the i-th marker. The images are decoded already
// (bitmap.Decode): no request's bytes reach llama.cpp's image decoder.
// The model's own markers around an image (such as Gemma's
// <start_of_image>) become text tokens. An image that is no well-formed
// RGB fails with an *ImageError.
func (p *Projector) Tokenize(text string, images []*bitmap.RGB) ([]Chunk, error) {
	for i, img := range images {
		if img == nil || img.Width <= 0 || img.Height <= 0 || len(img.Pix) != 3*img.Width*img.Height {
			return nil, &ImageError{Index: i, Err: ErrImageFormat}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c == nil {
		return nil, errors.New("llamacpp: projector closed")
	}
	bitmaps := make([]*C.mtmd_bitmap, len(images))
	defer freeBitmaps(bitmaps)
	for i, img := range images {
		// mtmd copies the pixels; the Go memory holds no pointers.
		bitmaps[i] = C.mtmd_bitmap_init(C.uint32_t(img.Width), C.uint32_t(img.Height), (*C.uchar)(unsafe.Pointer(&img.Pix[0])))
	}
	return p.tokenize(text, bitmaps, true)
}

// Encode is Tokenize of MediaMarker and img, for backend.Projector.
func (p *Projector) Encode(img *bitmap.RGB) ([]Chunk, error) {
	return p.Tokenize(MediaMarker, []*bitmap.RGB{img})
}

// ImageTokens returns the number of tokens that Tokenize makes of
// MediaMarker and one image of width×height pixels: the image's and
// those of the model's own markers around it. It depends on the size
// alone, so no picture is decoded: it is worked out, the first time for a
// size, on a blank image of that size, which the projector preprocesses
// but does not encode.
func (p *Projector) ImageTokens(width, height int) (int, error) {
	if width <= 0 || height <= 0 || width > bitmap.MaxSide || height > bitmap.MaxSide {
		return 0, fmt.Errorf("llamacpp: an image of %d×%d pixels; at most %d a side", width, height, bitmap.MaxSide)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c == nil {
		return 0, errors.New("llamacpp: projector closed")
	}
	size := [2]int{width, height}
	if n, ok := p.counts[size]; ok {
		return n, nil
	}
	blank := C.calloc(C.size_t(3*width*height), 1) // pages the kernel maps lazily, as zeros
	if blank == nil {
		return 0, errors.New("llamacpp: no memory for a blank image")
	}
	b := C.mtmd_bitmap_init(C.uint32_t(width), C.uint32_t(height), (*C.uchar)(blank))
	C.free(blank)
	bitmaps := []*C.mtmd_bitmap{b}
	defer freeBitmaps(bitmaps)
	chunks, err := p.tokenize(MediaMarker, bitmaps, false)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range chunks {
		n += len(c.Tokens)
		if c.Image != nil {
			n += c.Image.Positions // set to the token count when not encoded
		}
	}
	if p.counts == nil || len(p.counts) >= maxCounts {
		p.counts = map[[2]int]int{}
	}
	p.counts[size] = n
	return n, nil
}

// freeBitmaps frees the bitmaps that are not nil.
func freeBitmaps(bitmaps []*C.mtmd_bitmap) {
	for _, b := range bitmaps {
		if b != nil {
			C.mtmd_bitmap_free(b)
		}
	}
}

// tokenize is Tokenize of bitmaps made already, whose image chunks,
// unless encode is set, hold no values and their token count in
// Positions. The caller holds p.mu, and p is open.
func (p *Projector) tokenize(text string, bitmaps []*C.mtmd_bitmap, encode bool) ([]Chunk, error) {
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	input := C.mtmd_input_text{text: ctext, add_special: false, parse_special: true}
	chunks := C.mtmd_input_chunks_init()
	defer C.mtmd_input_chunks_free(chunks)
	var bp **C.mtmd_bitmap
	if len(bitmaps) > 0 {
		bp = (**C.mtmd_bitmap)(C.malloc(C.size_t(len(bitmaps)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
		defer C.free(unsafe.Pointer(bp))
		copy(unsafe.Slice(bp, len(bitmaps)), bitmaps)
	}
	switch rc := C.mtmd_tokenize(p.c, chunks, &input, bp, C.size_t(len(bitmaps))); rc {
	case 0:
	case 1:
		return nil, fmt.Errorf("llamacpp: %d images for the markers of the text", len(bitmaps))
	default:
		return nil, fmt.Errorf("llamacpp: preparing the images failed (code %d)", int(rc))
	}
	width := int(C.llama_model_n_embd_inp(p.model.c))
	var out []Chunk
	for i := range int(C.mtmd_input_chunks_size(chunks)) {
		chunk := C.mtmd_input_chunks_get(chunks, C.size_t(i))
		switch C.mtmd_input_chunk_get_type(chunk) {
		case C.MTMD_INPUT_CHUNK_TYPE_TEXT:
			var n C.size_t
			toks := C.mtmd_input_chunk_get_tokens_text(chunk, &n)
			if n > 0 {
				out = append(out, Chunk{Tokens: append([]Token(nil), unsafe.Slice((*Token)(unsafe.Pointer(toks)), int(n))...)})
			}
		case C.MTMD_INPUT_CHUNK_TYPE_IMAGE:
			n := int(C.mtmd_input_chunk_get_n_tokens(chunk))
			rows := &Embeddings{Width: width, Positions: int(C.mtmd_input_chunk_get_n_pos(chunk))}
			if bool(C.mtmd_decode_use_mrope(p.c)) {
				img := C.mtmd_input_chunk_get_tokens_image(chunk)
				rows.GridX, rows.GridY = int(C.mtmd_image_tokens_get_nx(img)), int(C.mtmd_image_tokens_get_ny(img))
				if rows.GridX*rows.GridY != n {
					return nil, fmt.Errorf("llamacpp: an image of %d tokens on a %d×%d grid", n, rows.GridX, rows.GridY)
				}
			} else if rows.Positions != n {
				return nil, errors.New("llamacpp: an image's positions differ from its tokens")
			}
			if !encode {
				out = append(out, Chunk{Image: &Embeddings{Width: width, Positions: n}})
				continue
			}
			if rc := C.mtmd_encode_chunk(p.c, chunk); rc != 0 {
				return nil, fmt.Errorf("llamacpp: encoding an image failed (code %d)", int(rc))
			}
			embd := C.mtmd_get_output_embd(p.c)
			if embd == nil || n == 0 {
				return nil, errors.New("llamacpp: an image gave no embeddings")
			}
			rows.Values = append([]float32(nil), unsafe.Slice((*float32)(unsafe.Pointer(embd)), n*width)...)
			out = append(out, Chunk{Image: rows})
		default:
			return nil, errors.New("llamacpp: the projector made a chunk that is no text and no image")
		}
	}
	return out, nil
}
