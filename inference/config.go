package inference

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/runner"
	"github.com/inferkit/inferkit/search"
	"go.opentelemetry.io/otel/trace"
)

// Config configures an Engine. The zero value of every field but Models is
// useful: see each field for its default.
type Config struct {
	// Models are the models to load. Entries that name the same file share
	// one loaded copy; an entry with Remote runs on its upstream, and
	// loads nothing (see the package documentation).
	Models []catalog.Model
	// Threads is the number of CPU threads each model decodes with.
	// Default runtime.NumCPU(). llama.cpp's threads spin while they wait:
	// more threads than cores (counting every model that decodes at the
	// same time) makes decoding many times slower.
	Threads int
	// Backend is the library that runs the models: "llama.cpp",
	// "ollama" (Ollama's Go engine, linked in the same process, on the
	// same ggml kernels) or "libllama" (the llama.cpp shared library that
	// Library names, loaded at run time). The default, "", is libllama
	// when a library is configured, then llama.cpp, then the Go engine
	// for a file neither loads: an architecture newer than the
	// compiled-in build, such as qwen35 (Qwen3.5) or gemma4 (Gemma 4).
	// On the Go engine, a model has no prompt cache on disk (CacheDir),
	// no images, no encoder models and only f16 KV caches; Qwen3.5's
	// recurrent layers reuse a cached prompt prefix only where the cache
	// holds nothing past it, and decode each sequence in a pass of its
	// own. Its CPU thread count is one for the whole process: the last
	// model loaded sets it. On libllama, a model has no images, and a
	// prompt cache on disk only for architectures llama, qwen2 and qwen3
	// without a sliding window (see the README).
	Backend string
	// Library is the llama.cpp shared library (libllama.so,
	// libllama.dylib) of release v0.4.0's API that backend "libllama"
	// loads, its ggml backends beside it; default the environment
	// variable INFERKIT_LIBLLAMA. New refuses a path that names no file,
	// and a library of another API, naming both versions. It applies to
	// Backend "libllama" and ""; with another Backend, only the
	// environment variable may be set, and it is not used.
	Library string
	// FlashAttention runs the library's attention (Config.Library)
	// through flash attention on f16 KV caches too, as the library's
	// own default and node-llama-cpp do: prefill is faster (see
	// BENCHMARKS.md), but a sequence's log-probabilities then vary, by
	// up to about 2e-3, with what else shares its batch, so a decision
	// scored beside others is not exactly the one scored alone. Off by
	// default, so that scores do not depend on the load; a quantized
	// value cache (ValueCache) uses flash attention anyway. It applies
	// to the models that run on the library: with Backend "llama.cpp"
	// (whose compiled-in build always uses it) or "ollama", New refuses
	// it.
	FlashAttention bool
	// Parallel is the number of sequences each model decodes at once.
	// Default 4.
	Parallel int
	// ContextTokens is the number of tokens (prompt and output) one
	// sequence holds. Default 4096; never more than the model was trained
	// for.
	ContextTokens int
	// KVTokens is the number of KV cells that a model's Parallel
	// sequences share: the prompt and output tokens of the requests at
	// work and the cached prompts of idle sequences. A request reserves
	// its prompt and output limit when it starts, and waits in the queue
	// while the cells at work leave too few (idle caches give theirs up,
	// least recently used first); one that could never fit fails with
	// ErrContextLength, and ModelInfo.ContextLength is at most KVTokens.
	// Default Parallel × ContextTokens: every sequence its whole context, the
	// worst case. Less saves memory where requests are mostly short.
	KVTokens int
	// MemoryLimit bounds the bytes New may load: a configuration whose
	// Plan is larger fails, with the plan in the error, before anything
	// loads. 0 means the memory the machine has available when New runs
	// (MemAvailable of /proc/meminfo; no bound where it cannot be read);
	// a negative value means no bound.
	MemoryLimit int64
	// Queue is the number of requests that may wait for a free sequence of
	// a model; past it, requests fail with ErrOverloaded. Default 64.
	Queue int
	// Batch is the most tokens one decode step takes. Prompts longer than
	// what is left of it are prefilled in chunks across steps. Default 512.
	Batch int
	// Branches is the number of extra sequences each model keeps for the
	// branches of Engine.Score, which decode together in one batch; a
	// request with more branches decodes them in groups. Parallel +
	// Branches is at most 256. Default 32, or what 256 leaves beside
	// Parallel; with none left, Score fails.
	Branches int
	// BranchContext is the number of KV cells each model keeps for those
	// branches, beyond the Parallel sequences' contexts, so that scoring
	// never runs out of room: the branches decoded at once hold at most
	// these and the cells that their prefix leaves free of its own
	// sequence's ContextTokens. Default Batch.
	BranchContext int
	// KeyCache and ValueCache are the element types of the generation
	// models' KV caches: "f16" (the default, also ""), "q8_0" (about half
	// the memory of f16) or "q4_0" (about a quarter). A quantized value
	// cache runs attention through llama.cpp's flash attention, on the
	// CPU too. Quantized caches change the logits slightly: see
	// BENCHMARKS.md for what they cost in greedy agreement.
	KeyCache, ValueCache string
	// Progress, if set, is called while a model loads with the model's
	// path and the fraction loaded: from the goroutine calling New, and,
	// when a request loads a model again after KeepAlive unloaded it,
	// from the engine's loading goroutine.
	Progress func(path string, fraction float64)
	// KeepAlive is how long a model stays loaded with no request at work
	// on it; then its weights, KV cache and projector are freed (its
	// prompt prefixes saved first, with CacheDir), and the next request
	// that needs it, or Engine.Load, loads it again while the request
	// waits. Default 5 minutes, as Ollama's; negative means never.
	KeepAlive time.Duration
	// RemoteHealthInterval is the time between health checks of each
	// replica of a remote model (catalog.Model.Remote): GET {URL}/models
	// answering 200. A replica that fails a request is passed over
	// until a check passes again. 0 means 5 seconds.
	RemoteHealthInterval time.Duration
	// Search runs the web searches of requests that enable them
	// (Request.Search): a search.SearXNG, a localindex.Index over local
	// documents, or an application's own. nil: requests that ask to
	// search fail with a *FieldError naming Search.
	Search search.Searcher
	// Draft chooses how generation drafts tokens for a model to verify
	// in one batch (speculative decoding): DraftDefault (the zero value)
	// uses the draft model of a catalog entry that names one
	// (catalog.Model.Draft) and drafts nothing for the others;
	// DraftNgram also drafts, for those, by n-gram lookup in the
	// request's own prompt and output; DraftNone never drafts. Drafting
	// changes no output: greedy requests give the same tokens and sampled
	// ones the same distribution; it only saves decode steps when the
	// drafts are right (Usage.AcceptedTokens), and steps aside while other
	// requests fill the batch. Requests opt out with Request.Speculative.
	// A recurrent or hybrid model drafts only with DraftRecurrent.
	Draft Drafting
	// DraftRecurrent lets a recurrent or hybrid model draft (Draft)
	// where its backend rolls its state back: the library's Qwen3.5. It
	// then keeps 8 snapshots of each sequence's recurrent state, 8 times
	// the state's memory, and its decode pays for them at every step:
	// on the Qwen3.5-0.8B shape on a 2-core CPU that made decoding 0.87
	// times as fast before any draft, and drafting at any acceptance did
	// not win it back (BENCHMARKS.md), so it is off by default. Elsewhere
	// (Mamba, Jamba, the Go engine's Qwen3.5) such models never draft.
	DraftRecurrent bool
	// Logger receives the engine's log. Default slog.Default().
	Logger *slog.Logger
	// TracerProvider, when set, receives a span for every call of the
	// engine, named and attributed by OpenTelemetry's GenAI semantic
	// conventions ("chat MODEL", "embeddings MODEL", with gen_ai.* token
	// counts and finish reasons), below the span of the caller's context:
	// a generation's span holds its prompt's preparation, then, per
	// choice and turn, its wait for a sequence (inferkit.queue), its
	// prefill (inferkit.prefill) and its decode (inferkit.decode), and a
	// span (execute_tool NAME) for each search or tool the engine runs
	// between turns. No text of a prompt or an answer goes into a span.
	// Nil means no spans, at no cost.
	TracerProvider trace.TracerProvider
	// CacheTTL is how long the tokens of a finished request stay usable as
	// a cached prompt prefix in memory. Default 5 minutes.
	CacheTTL time.Duration
	// CacheDir, if set, keeps the KV states of prompt prefixes in files
	// under this directory, so that they outlive the process: after a
	// restart, a prompt that starts with a saved prefix restores it
	// instead of decoding it again, and Usage.CachedTokens counts it.
	// A prefix of at least 256 tokens is saved when a request reuses it
	// from memory, when a request decodes a prompt of 1,024 tokens or
	// more, and when the engine closes or unloads the model with it
	// cached; a recurrent model's (Mamba, Jamba), whose state cannot be
	// cut back to a shorter prefix, also at its checkpoints' positions
	// (CheckpointEvery). Ollama's Go engine (Qwen3.5) cannot save a
	// sequence, so its models keep no prefixes on disk. Entries are keyed by the model file and the KV cache types,
	// written atomically and checked before use: only regular files are
	// read (opened without blocking and without following links, so a
	// FIFO or a device under an entry's name is refused at once), a
	// state no larger than the model's context can hold, a CRC-32C, and
	// the state itself, field by field, against the model's layers and
	// the context's cells before llama.cpp reads it. An entry that fails
	// is removed and logged once at Warn; the request is served as if
	// it were not there. Requests that ask for log-probabilities, and
	// prompts with images, neither save nor restore; nor do models with
	// several positions per token (M-RoPE, such as Qwen2-VL), whose
	// states llama.cpp cannot restore safely. One engine should use a
	// directory at a time.
	CacheDir string
	// CacheBytes bounds the bytes of the files under CacheDir; the least
	// recently used entries go first. Default 4 GiB.
	CacheBytes int64
	// CheckpointBytes bounds, per model, the memory of checkpoints of
	// recurrent state, on every backend: llama.cpp's Mamba and Jamba,
	// the Go engine's Qwen3.5 and the library's (Config.Library) three
	// of them. A recurrent or hybrid model keeps a
	// state per sequence that cannot be cut back to the prefix that a
	// later prompt shares, so the engine keeps copies of it at the end of
	// each prompt (and the token before, which a repeated prompt decodes
	// again), at the end of each turn and every CheckpointEvery tokens of
	// a long prompt; a prompt then resumes from the last one within what
	// it shares, and Usage.CachedTokens counts the tokens before it. The
	// least recently used go first. Default 256 MiB; negative: none, and
	// such a model reuses a sequence only when a prompt continues all of
	// it. Other models ignore it.
	CheckpointBytes int64
	// CheckpointEvery is how many tokens of a long prompt a recurrent
	// model decodes between checkpoints (see CheckpointBytes). Default
	// 512; negative: none but the ends of prompts and turns.
	CheckpointEvery int
	// Now tells the time for CacheTTL, KeepAlive and the recency of
	// CacheDir's entries. Default time.Now.
	Now func() time.Time

	// saveMin and saveLong are the prompt cache's thresholds (see
	// CacheDir); tests lower them.
	saveMin, saveLong int
	// load, when set (by tests), loads the models instead of the backends
	// of loader.go: a fake backend, without cgo.
	load func(path string, progress func(float32) bool) (backend.Model, error)
	// drafter, when set (by tests and benchmarks), makes the drafter of
	// every generative model instead of Draft.
	drafter func() runner.Drafter
	// keyType and valueType are KeyCache and ValueCache, parsed.
	keyType, valueType backend.CacheType
	// loadLibrary loads a model with Library, opened by withDefaults;
	// nil without one.
	loadLibrary func(path string, progress func(float32) bool) (backend.Model, error)
}

// libraryEnv is the environment variable that names the default
// Config.Library.
const libraryEnv = "INFERKIT_LIBLLAMA"

// Drafting is how a model's tokens are drafted (Config.Draft).
type Drafting string

// The ways of drafting.
const (
	// DraftDefault drafts with the draft models that catalog entries
	// name, and for no other model.
	DraftDefault Drafting = ""
	// DraftNgram drafts by n-gram lookup in each request's prompt and
	// output where an entry names no draft model: no second model, and
	// a gain where the output copies its prompt (quoting, editing, code).
	DraftNgram Drafting = "ngram"
	// DraftNone never drafts.
	DraftNone Drafting = "none"
)

// slotCells is the KV cells a generative model's sequences share when
// each holds perSeq tokens: KVTokens, or all their contexts if fewer.
func (c Config) slotCells(perSeq int) int { return min(c.KVTokens, perSeq*c.Parallel) }

// withLibrary checks Backend and opens Library where it applies.
func (c *Config) withLibrary() error {
	switch c.Backend {
	case "", backend.LibLlama:
	case backend.LlamaCpp, backend.Ollama:
		if c.Library != "" {
			return fmt.Errorf("inference: Config.Library is set, but Config.Backend is %q: the library is for %q (or \"\")", c.Backend, backend.LibLlama)
		}
		if c.FlashAttention {
			return fmt.Errorf("inference: Config.FlashAttention is set, but Config.Backend is %q: it is the library's choice, for %q (or \"\")", c.Backend, backend.LibLlama)
		}
		return nil
	default:
		return fmt.Errorf("inference: Config.Backend is %q: want %q, %q, %q or \"\" (libllama when a library is configured, then llama.cpp, then the Go engine for files llama.cpp cannot load)", c.Backend, backend.LlamaCpp, backend.Ollama, backend.LibLlama)
	}
	if c.Library == "" {
		c.Library = os.Getenv(libraryEnv)
	}
	if c.Library == "" {
		if c.Backend == backend.LibLlama {
			return fmt.Errorf("inference: Config.Backend is %q, but no library is configured: set Config.Library or %s to the path of libllama", backend.LibLlama, libraryEnv)
		}
		if c.FlashAttention {
			return fmt.Errorf("inference: Config.FlashAttention is set, but no library is configured (Config.Library or %s): it is the library's choice", libraryEnv)
		}
		return nil
	}
	if _, err := os.Stat(c.Library); err != nil {
		return fmt.Errorf("inference: Config.Library: %w", err)
	}
	load, err := openLibrary(c.Library)
	if err != nil {
		return fmt.Errorf("inference: Config.Library: %w", err)
	}
	c.loadLibrary = load
	return nil
}

func (c Config) withDefaults() (Config, error) {
	if len(c.Models) == 0 {
		return c, fmt.Errorf("inference: Config.Models is empty")
	}
	if err := catalog.Validate(c.Models); err != nil {
		return c, fmt.Errorf("inference: %w", err)
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"Parallel", &c.Parallel, 4}, {"ContextTokens", &c.ContextTokens, 4096}, {"Queue", &c.Queue, 64}, {"Batch", &c.Batch, 512}, {"Threads", &c.Threads, runtime.NumCPU()}} {
		if *f.v < 0 {
			return c, fmt.Errorf("inference: Config.%s is %d", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if c.KVTokens < 0 {
		return c, fmt.Errorf("inference: Config.KVTokens is %d", c.KVTokens)
	}
	if c.KVTokens == 0 {
		c.KVTokens = c.Parallel * c.ContextTokens
	}
	if c.Batch < 4*c.Parallel {
		// Every generating sequence adds a token, and up to three more
		// when the engine closes a thinking section, at each step.
		return c, fmt.Errorf("inference: Config.Batch is %d, at least 4 per parallel sequence (%d)", c.Batch, 4*c.Parallel)
	}
	if c.Parallel > 256 {
		return c, fmt.Errorf("inference: Config.Parallel is %d, at most 256", c.Parallel)
	}
	if c.Branches < 0 || c.BranchContext < 0 {
		return c, fmt.Errorf("inference: Config.Branches is %d and Config.BranchContext %d", c.Branches, c.BranchContext)
	}
	if c.Branches == 0 {
		c.Branches = min(32, 256-c.Parallel)
	}
	if c.BranchContext == 0 {
		c.BranchContext = c.Batch
	}
	if c.Parallel+c.Branches > 256 {
		return c, fmt.Errorf("inference: Config.Parallel + Config.Branches is %d, at most 256", c.Parallel+c.Branches)
	}
	if err := c.withLibrary(); err != nil {
		return c, err
	}
	var err error
	if c.keyType, err = backend.ParseCacheType(c.KeyCache); err != nil {
		return c, fmt.Errorf("inference: Config.KeyCache: %w", err)
	}
	if c.valueType, err = backend.ParseCacheType(c.ValueCache); err != nil {
		return c, fmt.Errorf("inference: Config.ValueCache: %w", err)
	}
	switch c.Draft {
	case DraftDefault, DraftNgram, DraftNone:
	default:
		return c, fmt.Errorf("inference: Config.Draft is %q: want %q, %q or \"\"", c.Draft, DraftNgram, DraftNone)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.CacheTTL < 0 {
		return c, fmt.Errorf("inference: Config.CacheTTL is %v", c.CacheTTL)
	}
	if c.CacheTTL == 0 {
		c.CacheTTL = 5 * time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.RemoteHealthInterval < 0 {
		return c, fmt.Errorf("inference: Config.RemoteHealthInterval is %v", c.RemoteHealthInterval)
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = 5 * time.Minute
	}
	if c.CacheBytes < 0 {
		return c, fmt.Errorf("inference: Config.CacheBytes is %d", c.CacheBytes)
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = 4 << 30
	}
	if c.saveMin == 0 {
		c.saveMin, c.saveLong = 256, 1024
	}
	if c.CheckpointBytes == 0 {
		c.CheckpointBytes = 256 << 20
	}
	if c.CheckpointEvery == 0 {
		c.CheckpointEvery = 512
	}
	return c, nil
}
