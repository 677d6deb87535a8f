//go:build cgo && unix

package inference

import (
	"encoding/binary"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
)

// The prompt cache on disk works on libllama: a prefix saved by one
// engine is restored by the next after a restart and continues as the
// first engine did.
func TestLibraryPromptCacheSurvivesRestart(t *testing.T) {
	checkSurvivesRestart(t, Config{Backend: backend.LibLlama, Library: testLibrary(t)})
}

// In a libllama state of the byte-level tiny model: the magic, the
// source sequence, the stream count (1), the cell count at byte 12, the
// cells of 12 bytes from byte 16, then value transposition, layer count,
// and each layer's key type and row size.
func libStateData(s []byte) int { return 16 + 12*int(binary.LittleEndian.Uint32(s[12:])) }

// Entries whose checksums are sound but whose libllama states are
// crafted are refused before the library reads them, removed and
// logged, and the request is served as without the cache.
func TestLibraryPromptCacheDamagedStates(t *testing.T) {
	checkDamagedStates(t, Config{Backend: backend.LibLlama, Library: testLibrary(t)}, []damagedState{
		{"a position of -1", func(s []byte) []byte { return set32(s, 16+12*5, 0xffffffff) }},
		{"a huge cell count", func(s []byte) []byte { return set32(s, 12, 1<<24) }},
		{"another layer count", func(s []byte) []byte {
			return set32(s, libStateData(s)+4, binary.LittleEndian.Uint32(s[libStateData(s)+4:])+1)
		}},
		{"another key type", func(s []byte) []byte { return set32(s, libStateData(s)+8, 0) }},
		{"a byte appended", func(s []byte) []byte { return append(s, 0) }},
		{"a truncated state", func(s []byte) []byte { return s[:len(s)-100] }},
		{"a state longer than the context holds", func(s []byte) []byte { return make([]byte, 4<<20) }},
	})
}
