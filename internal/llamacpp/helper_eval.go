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
	"unsafe"
)

// EvalWithHelper decodes text and its images on sequence 0 of ctx the way
// llama.cpp's own mtmd helper does (mtmd_helper_eval_chunks: positions,
// M-RoPE grids, causal switching and all), asking for the logits of the
// last token (Logits(-1)). It is the reference that tests hold the
// engine's way of decoding images against, pictures decoded by llama.cpp's
// own decoder (stb_image) included; the engine does not use it, and no
// request's bytes reach it.
func EvalWithHelper(p *Projector, ctx *Context, text string, images [][]byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	bitmaps := make([]*C.mtmd_bitmap, len(images))
	for i, img := range images {
		buf := C.CBytes(img)
		bitmaps[i] = C.mtmd_helper_bitmap_init_from_buf(p.c, (*C.uchar)(buf), C.size_t(len(img)))
		C.free(buf)
		if bitmaps[i] == nil {
			return &ImageError{Index: i, Err: errors.New("llama.cpp's decoder cannot read it")}
		}
		defer C.mtmd_bitmap_free(bitmaps[i])
	}
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	input := C.mtmd_input_text{text: ctext, add_special: false, parse_special: true}
	chunks := C.mtmd_input_chunks_init()
	defer C.mtmd_input_chunks_free(chunks)
	bp := (**C.mtmd_bitmap)(C.malloc(C.size_t(max(1, len(bitmaps))) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(bp))
	copy(unsafe.Slice(bp, len(bitmaps)), bitmaps)
	if rc := C.mtmd_tokenize(p.c, chunks, &input, bp, C.size_t(len(bitmaps))); rc != 0 {
		return fmt.Errorf("llamacpp: mtmd_tokenize: code %d", int(rc))
	}
	n := C.mtmd_input_chunks_size(chunks)
	if n == 0 || C.mtmd_input_chunk_get_type(C.mtmd_input_chunks_get(chunks, n-1)) != C.MTMD_INPUT_CHUNK_TYPE_TEXT {
		return errors.New("llamacpp: the text must end with text")
	}
	var past C.llama_pos
	if rc := C.mtmd_helper_eval_chunks(p.c, ctx.c, chunks, 0, 0, C.int32_t(ctx.nBatch), true, &past); rc != 0 {
		return fmt.Errorf("llamacpp: mtmd_helper_eval_chunks: code %d", int(rc))
	}
	return nil
}
