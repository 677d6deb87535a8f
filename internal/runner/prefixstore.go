package runner

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
)

// PrefixStore keeps the KV states of prompt prefixes in files under a
// directory (inference.Config.CacheDir), so that they outlive the process. Each
// model has a folder named by its key (PrefixKey): the identity of its
// file and of the settings that shape its KV bytes. An entry is one file:
//
//	magic "inferkv\n", version (uint32), key length (uint32) and key,
//	token count (uint32), state length (uint64), the tokens (int32 each),
//	the state, and a CRC-32C of everything before it.
//
// Little-endian throughout. A file is written under a temporary name,
// synced and renamed, so that a crash mid-write leaves a temporary file
// that is never read. The store trusts nothing it reads (bit rot, a
// half-copied backup, another program's file): it opens only regular
// files, without blocking or following links (openEntry), so that a FIFO
// under an entry's name cannot stall start-up or the runner; it checks
// an entry whole (sizes, key, tokens, checksum), and the state's length
// against the most the model's context can hold before it reads the
// state; the backend then checks the state itself before it uses it
// (backend.ErrBadState). An entry that fails any of these is removed and
// said so once at Warn (Reject).
//
// The store is bounded in bytes and forgets the least recently used
// entries first. It is safe for concurrent use; one process should use a
// directory at a time.
type PrefixStore struct {
	dir   string
	limit int64
	log   *slog.Logger
	now   func() time.Time

	mu      sync.Mutex
	entries map[string]*StoredPrefix // by file path
	bytes   int64

	// writing, when set, is closed when the asynchronous save under way
	// ends (s.mu guards it): one at a time.
	writing chan struct{}
	// midWrite, when set (by tests), runs in the middle of writing an
	// entry's temporary file.
	midWrite func()
}

// StoredPrefix is an entry in the store's index: its tokens are read at
// open, its state only when it is restored.
// Path and Tokens are read only.
type StoredPrefix struct {
	Path   string  // its file
	Tokens []int32 // the prefix it holds
	key    string
	size   int64
	used   time.Time
}

const (
	prefixMagic   = "inferkv\n"
	prefixVersion = 1
	// prefixMaxTokens bounds the token count a file may claim.
	prefixMaxTokens = 1 << 24
	// staleTemp is the age past which an unfinished temporary file is a
	// crash's leftover, and removed at open.
	staleTemp = time.Hour
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// OpenPrefixStore reads the index of the entries under dir, creating it if
// needed. Files that are not whole entries are removed. Its errors are
// the file system's, for the caller to name the setting.
func OpenPrefixStore(dir string, limit int64, log *slog.Logger, now func() time.Time) (*PrefixStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &PrefixStore{dir: dir, limit: limit, log: log, now: now, entries: map[string]*StoredPrefix{}}
	keys, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if !k.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, k.Name()))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			path := filepath.Join(dir, k.Name(), f.Name())
			switch {
			case strings.HasPrefix(f.Name(), ".tmp-"):
				if info, err := f.Info(); err == nil && now().Sub(info.ModTime()) > staleTemp {
					os.Remove(path)
				}
			case strings.HasSuffix(f.Name(), ".kv"):
				e, err := ReadPrefixHeader(path, k.Name())
				if err != nil {
					s.Reject(path, err)
					continue
				}
				s.entries[path] = e
				s.bytes += e.size
			}
		}
	}
	s.mu.Lock()
	s.evict(0)
	s.mu.Unlock()
	return s, nil
}

// ReadPrefixHeader reads an entry's header and tokens, and checks that the
// file is as long as they say.
func ReadPrefixHeader(path, key string) (*StoredPrefix, error) {
	e, _, err := ReadEntry(path, key, -1)
	return e, err
}

// ReadEntry reads the entry in the file at path: its header and tokens,
// checking that the file is a regular one (openEntry) as long as they
// say, and, with maxState 0 or more, its state, checking that it takes at
// most maxState bytes before it reads it, and then the checksum.
func ReadEntry(path, key string, maxState int64) (*StoredPrefix, []byte, error) {
	f, info, err := openEntry(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// The checksum sees exactly what the header, tokens and state take.
	crc := crc32.New(castagnoli)
	br := bufio.NewReaderSize(f, 1<<16)
	r := io.TeeReader(br, crc)
	tokens, stateLen, err := readHeader(r, key, info.Size())
	if err != nil {
		return nil, nil, err
	}
	if want := headerSize(key, len(tokens)) + stateLen + 4; info.Size() != want {
		return nil, nil, fmt.Errorf("%d bytes, the header says %d", info.Size(), want)
	}
	e := &StoredPrefix{key: key, Path: path, Tokens: tokens, size: info.Size(), used: info.ModTime()}
	if maxState < 0 {
		return e, nil, nil
	}
	if stateLen > maxState {
		return nil, nil, fmt.Errorf("a state of %d bytes, more than this model's context holds (%d)", stateLen, maxState)
	}
	data := make([]byte, stateLen)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, nil, err
	}
	var tail [4]byte
	if _, err := io.ReadFull(br, tail[:]); err != nil {
		return nil, nil, err
	}
	if binary.LittleEndian.Uint32(tail[:]) != crc.Sum32() {
		return nil, nil, errors.New("its checksum does not match")
	}
	return e, data, nil
}

func headerSize(key string, tokens int) int64 {
	return int64(len(prefixMagic) + 4 + 4 + len(key) + 4 + 8 + 4*tokens)
}

// readHeader reads the header and tokens of an entry whose file has size
// bytes, checking each length against the file before reading it.
func readHeader(r io.Reader, key string, size int64) (tokens []int32, stateLen int64, err error) {
	var fixed [len(prefixMagic) + 8]byte
	if _, err := io.ReadFull(r, fixed[:]); err != nil {
		return nil, 0, err
	}
	if string(fixed[:len(prefixMagic)]) != prefixMagic {
		return nil, 0, errors.New("not a prompt cache entry")
	}
	if v := binary.LittleEndian.Uint32(fixed[len(prefixMagic):]); v != prefixVersion {
		return nil, 0, fmt.Errorf("format version %d, this build reads %d", v, prefixVersion)
	}
	if n := binary.LittleEndian.Uint32(fixed[len(prefixMagic)+4:]); int(n) != len(key) {
		return nil, 0, errors.New("the entry belongs to another model or settings")
	}
	var rest = make([]byte, len(key)+12)
	if _, err := io.ReadFull(r, rest); err != nil {
		return nil, 0, err
	}
	if string(rest[:len(key)]) != key {
		return nil, 0, errors.New("the entry belongs to another model or settings")
	}
	n := binary.LittleEndian.Uint32(rest[len(key):])
	stateLen = int64(binary.LittleEndian.Uint64(rest[len(key)+4:]))
	if n == 0 || n > prefixMaxTokens || headerSize(key, int(n)) > size || stateLen <= 0 || stateLen > size {
		return nil, 0, fmt.Errorf("%d tokens and %d state bytes in a file of %d", n, stateLen, size)
	}
	raw := make([]byte, 4*int(n))
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, 0, err
	}
	tokens = make([]int32, n)
	for i := range tokens {
		tokens[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return tokens, stateLen, nil
}

// Longest returns the entry of key, of at most most tokens (what one
// sequence holds), that shares the longest prefix with prompt, up to limit
// tokens, and that length. With partial false, only an entry whose tokens
// are all a prefix of the prompt counts (a recurrent state cannot be cut
// short).
func (s *PrefixStore) Longest(key string, prompt []int32, limit, most int, partial bool) (*StoredPrefix, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *StoredPrefix
	n := 0
	for _, e := range s.entries {
		if e.key != key || len(e.Tokens) > most {
			continue
		}
		k := min(CommonPrefix(e.Tokens, prompt), limit)
		if !partial && k < len(e.Tokens) {
			continue
		}
		if k > n || k == n && best != nil && len(e.Tokens) < len(best.Tokens) {
			best, n = e, k
		}
	}
	return best, n
}

// CommonPrefix is the length of the longest common prefix of a and b,
// token sequences.
func CommonPrefix(a, b []int32) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Covered reports whether an entry of key holds tokens: exactly, or, with
// partial, as its prefix.
func (s *PrefixStore) Covered(key string, tokens []int32, partial bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		if e.key == key && (len(e.Tokens) == len(tokens) || partial && len(e.Tokens) > len(tokens)) &&
			slices.Equal(e.Tokens[:len(tokens)], tokens) {
			return true
		}
	}
	return false
}

// Load reads and checks e's file and returns its state, of at most
// maxState bytes (what the model's context can hold), which it checks
// before it reads the state. An entry that fails the check is removed,
// and said so once (Reject).
func (s *PrefixStore) Load(e *StoredPrefix, maxState int64) ([]byte, error) {
	state, err := s.read(e, maxState)
	if err != nil {
		s.Reject(e.Path, err)
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e.used = s.now()
	os.Chtimes(e.Path, e.used, e.used) // the LRU order outlives the process
	return state, nil
}

// Reject forgets the entry at path and removes its file (only that name:
// a symbolic link, not what it names; a directory only when empty),
// saying so at Warn with why. An entry is indexed once, so this is said
// once for it.
func (s *PrefixStore) Reject(path string, why error) {
	s.mu.Lock()
	if e := s.entries[path]; e != nil {
		delete(s.entries, path)
		s.bytes -= e.size
	}
	s.mu.Unlock()
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("runner: a prompt cache entry failed its check and could not be removed", "path", path, "why", why, "err", err)
		return
	}
	s.log.Warn("runner: a prompt cache entry failed its check and was removed", "path", path, "why", why)
}

// OnMidWrite sets a function that runs in the middle of writing each
// entry's temporary file: a hook for tests, to be set before any save.
func (s *PrefixStore) OnMidWrite(f func()) { s.midWrite = f }

// Limit is the most bytes the store keeps.
func (s *PrefixStore) Limit() int64 { return s.limit }

// WriteEntry writes an entry of key for tokens and state at path, as the
// store does, without indexing it: for tests that damage an entry under
// a sound checksum.
func WriteEntry(path, key string, tokens []int32, state []byte) error {
	return (&PrefixStore{}).write(filepath.Dir(path), path, key, tokens, state)
}

func (s *PrefixStore) read(e *StoredPrefix, maxState int64) ([]byte, error) {
	got, state, err := ReadEntry(e.Path, e.key, max(0, maxState))
	if err != nil {
		return nil, err
	}
	if got.size != e.size || !slices.Equal(got.Tokens, e.Tokens) {
		return nil, errors.New("it changed since the store opened")
	}
	return state, nil
}

// drop forgets e and removes its file; s.mu is held.
func (s *PrefixStore) drop(e *StoredPrefix) {
	if s.entries[e.Path] == e {
		delete(s.entries, e.Path)
		s.bytes -= e.size
	}
	os.Remove(e.Path)
}

// evict removes the least recently used entries until room more bytes
// fit; s.mu is held.
func (s *PrefixStore) evict(room int64) {
	if s.bytes+room <= s.limit {
		return
	}
	lru := make([]*StoredPrefix, 0, len(s.entries))
	for _, e := range s.entries {
		lru = append(lru, e)
	}
	slices.SortFunc(lru, func(a, b *StoredPrefix) int { return a.used.Compare(b.used) })
	for _, e := range lru {
		if s.bytes+room <= s.limit {
			return
		}
		s.drop(e)
	}
}

// SaveAsync writes an entry in the background, unless a save is already
// under way: then it reports false, and the caller keeps nothing.
func (s *PrefixStore) SaveAsync(key string, tokens []int32, state []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writing != nil {
		return false
	}
	done := make(chan struct{})
	s.writing = done
	go func() {
		s.Save(key, tokens, state)
		s.mu.Lock()
		s.writing = nil
		s.mu.Unlock()
		close(done)
	}()
	return true
}

// Busy reports whether an asynchronous save is under way.
func (s *PrefixStore) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writing != nil
}

// Flush waits for the asynchronous save under way, if any.
func (s *PrefixStore) Flush() {
	s.mu.Lock()
	done := s.writing
	s.mu.Unlock()
	if done != nil {
		<-done
	}
}

// Save writes an entry of key for tokens, replacing one for the same
// tokens, and makes room for it; an entry larger than the whole store is
// not kept. Failures are logged: the cache is an optimisation.
func (s *PrefixStore) Save(key string, tokens []int32, state []byte) {
	size := headerSize(key, len(tokens)) + int64(len(state)) + 4
	if size > s.limit || len(tokens) == 0 || len(state) == 0 {
		return
	}
	sum := sha256.New()
	binary.Write(sum, binary.LittleEndian, tokens)
	folder := filepath.Join(s.dir, key)
	path := filepath.Join(folder, hex.EncodeToString(sum.Sum(nil)[:16])+".kv")
	if err := s.write(folder, path, key, tokens, state); err != nil {
		s.log.Warn("runner: saving a prompt prefix", "tokens", len(tokens), "err", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.entries[path]; old != nil {
		delete(s.entries, path)
		s.bytes -= old.size
	}
	s.evict(size)
	now := s.now()
	os.Chtimes(path, now, now)
	s.entries[path] = &StoredPrefix{key: key, Path: path, Tokens: tokens, size: size, used: now}
	s.bytes += size
}

// write writes an entry to a temporary file, syncs it and renames it to
// path.
func (s *PrefixStore) write(folder, path, key string, tokens []int32, state []byte) error {
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(folder, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	crc := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<16)
	var head bytes.Buffer
	head.WriteString(prefixMagic)
	binary.Write(&head, binary.LittleEndian, uint32(prefixVersion))
	binary.Write(&head, binary.LittleEndian, uint32(len(key)))
	head.WriteString(key)
	binary.Write(&head, binary.LittleEndian, uint32(len(tokens)))
	binary.Write(&head, binary.LittleEndian, uint64(len(state)))
	binary.Write(&head, binary.LittleEndian, tokens)
	w.Write(head.Bytes())
	half := len(state) / 2
	w.Write(state[:half])
	if s.midWrite != nil {
		w.Flush()
		s.midWrite()
	}
	w.Write(state[half:])
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := binary.Write(f, binary.LittleEndian, crc.Sum32()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(folder); err == nil {
		d.Sync() // the rename itself survives a crash
		d.Close()
	}
	return nil
}

// PrefixKey names a model's entries: a hash of the store's format, the
// llama.cpp build (the module that holds it), the model file's size, its
// first MiB (the header), 64 blocks of 64 KiB spread over the rest and
// its last MiB (another file, or another fine-tune of the same shape,
// differs in every tensor it changed, and each layer's tensors span more
// than the distance between two blocks), and settings, the engine's
// settings that shape the KV bytes.
func PrefixKey(path, settings string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "inferkv %d\n%s\n%s\n%d\n", prefixVersion, engineBuild(), settings, info.Size())
	const edge = 1 << 20
	if _, err := io.Copy(h, io.LimitReader(f, edge)); err != nil {
		return "", err
	}
	const blocks, block = 64, 64 << 10
	for i := range int64(blocks) {
		if _, err := io.Copy(h, io.NewSectionReader(f, info.Size()*i/blocks, block)); err != nil {
			return "", err
		}
	}
	if _, err := io.Copy(h, io.NewSectionReader(f, max(0, info.Size()-edge), edge)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// engineBuild is the version of the module that holds llama.cpp, whose
// state format may change from one build to the next.
func engineBuild() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/ollama/ollama" {
				if m.Replace != nil {
					return m.Path + " " + m.Version + " => " + m.Replace.Path + " " + m.Replace.Version
				}
				return m.Path + " " + m.Version
			}
		}
	}
	return "unknown build"
}
