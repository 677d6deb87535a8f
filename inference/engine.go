package inference

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/bitmap"
	"github.com/inferkit/inferkit/internal/family"
	"github.com/inferkit/inferkit/internal/grammar"
	"github.com/inferkit/inferkit/internal/runner"
	"go.opentelemetry.io/otel/trace"
)

// Engine runs GGUF models in-process. Each loaded model has a fixed number
// of parallel sequences, decoded together by one goroutine that owns the
// model's backend context (continuous batching); requests wait for a
// sequence in a bounded queue.
//
// An Engine is safe for concurrent use. The caller of New must call Close,
// which frees the models and ends every request still running.
type Engine struct {
	cfg   Config
	names map[string]*model
	infos []ModelInfo
	disk  *runner.PrefixStore // the prompt cache on disk, or nil

	// res keeps the models loaded while requests hold them.
	res *residency
	// tracer makes the engine's spans (trace.go); nil without
	// Config.TracerProvider.
	tracer trace.Tracer

	// onSearchTurn, when set (by tests), sees each turn a search loop
	// prepares after a search.
	onSearchTurn func(*Prepared)
	// onDecode, when set (by tests), sees each image as it starts to
	// decode, holding one of decoders, with the decode's context.
	onDecode func(context.Context, []byte)

	// decoders holds a token for each image being decoded (decodeImages).
	decoders chan struct{}
	// closing is closed by Close, ending the decodes under way.
	closing   chan struct{}
	closeOnce sync.Once

	mu     sync.RWMutex
	closed bool
}

// model is one loaded GGUF file and its runner.
type model struct {
	path   string
	llm    backend.Model
	runner *runner.Runner
	tmpl   *chatTemplate
	info   ModelInfo
	// family is the model's family (internal/family), which says how it
	// thinks, calls tools and writes its output; nil when no family
	// recognises its chat template: tools and thinking are then off.
	family *family.Family
	// marks are the family's thinking markers, as the engine finds them.
	marks thinkMarks
	// thinkClose is the tokens of the family's Thinking.Close, which the
	// engine writes to cut a thinking section short; nil when it cannot.
	thinkClose []backend.Token
	// encoder is set, and runner nil, for an encoder model (a GGUF that
	// asks for pooling): a reranker's serves Rank, an embedding model's
	// Embed, and generation and Score refuse both.
	encoder *runner.Encoder
	// projector, when set, reads the images of requests: the image parts
	// (Part.Image) of a Request's messages and ScoreRequest.Images. Only a
	// llama.cpp model has one.
	projector     backend.Projector
	projectorPath string
	// draftPath is the catalog's draft model for it, loaded as draft
	// beside llm; drafts says whether its runner has a drafter.
	draftPath string
	draft     backend.Model
	drafts    bool
	// remote is set, and every field above from llm nil, for a model
	// that an upstream runs (catalog.Model.Remote): it is always
	// loaded, and has nothing to free but its pool.
	remote *remoteModel

	// The fields from llm to projector are set while the model is
	// loaded: code that reads them holds a lease on the model
	// (residency.go), so that it is not unloaded meanwhile.
}

// New loads every model of cfg and starts its runner.
func New(cfg Config) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := checkMemory(cfg); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, names: map[string]*model{}, decoders: make(chan struct{}, maxDecoders), closing: make(chan struct{})}
	if cfg.TracerProvider != nil {
		e.tracer = cfg.TracerProvider.Tracer(tracerName)
	}
	e.res = newResidency(cfg, func(m *model) error { _, _, err := e.open(m); return err })
	if cfg.CacheDir != "" {
		if e.disk, err = runner.OpenPrefixStore(cfg.CacheDir, cfg.CacheBytes, cfg.Logger, cfg.Now); err != nil {
			return nil, fmt.Errorf("inference: Config.CacheDir: %w", err)
		}
	}
	byPath := map[string]*model{}
	for _, entry := range cfg.Models {
		if entry.Remote != nil {
			m, err := e.newRemote(entry)
			if err != nil {
				e.Close()
				return nil, fmt.Errorf("inference: model %q: %w", entry.ID, err)
			}
			e.res.add(m)
			for _, name := range append([]string{entry.ID}, entry.Aliases...) {
				e.names[name] = m
			}
			info := m.info
			info.ID, info.Aliases = entry.ID, entry.Aliases
			e.infos = append(e.infos, info)
			continue
		}
		path, err := filepath.Abs(entry.Path)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("inference: model %q: %w", entry.ID, err)
		}
		draft := entry.Draft
		if draft != "" {
			if draft, err = filepath.Abs(draft); err != nil {
				e.Close()
				return nil, fmt.Errorf("inference: model %q: %w", entry.ID, err)
			}
		}
		m := byPath[path]
		if m != nil && m.draftPath != draft {
			e.Close()
			return nil, fmt.Errorf("inference: model %q: draft model %q, but another entry gave this model file %q", entry.ID, draft, m.draftPath)
		}
		if m == nil {
			if m, err = e.load(path, draft); err != nil {
				e.Close()
				return nil, fmt.Errorf("inference: model %q: %w", entry.ID, err)
			}
			byPath[path] = m
			e.res.add(m)
		}
		if err := e.attachProjector(m, entry.Projector); err != nil {
			e.Close()
			return nil, fmt.Errorf("inference: model %q: %w", entry.ID, err)
		}
		for _, name := range append([]string{entry.ID}, entry.Aliases...) {
			e.names[name] = m
		}
		info := m.info
		info.ID, info.Aliases = entry.ID, entry.Aliases
		e.infos = append(e.infos, info)
	}
	for i := range e.infos {
		e.infos[i].Images = e.names[e.infos[i].ID].projector != nil
	}
	e.res.startSweeper()
	return e, nil
}

// attachProjector loads the projector at path for m, once: entries that
// share a model file must name the same projector or none.
func (e *Engine) attachProjector(m *model, path string) error {
	if path == "" {
		return nil
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	switch {
	case m.projector != nil && m.projectorPath == path:
		return nil
	case m.projector != nil:
		return fmt.Errorf("projector %s, but another entry gave this model file %s", path, m.projectorPath)
	case m.runner == nil:
		return fmt.Errorf("projector %s for an encoder model, which reads text only", path)
	}
	p, err := loadProjector(path, m.llm, e.cfg.Threads)
	if err != nil {
		return err
	}
	m.projector, m.projectorPath = p, path
	return nil
}

// loadProjector loads the projector at path for llm, whose backend must
// read images: only llama.cpp does.
func loadProjector(path string, llm backend.Model, threads int) (backend.Projector, error) {
	p, err := backend.LoadProjector(llm, path, threads)
	if errors.Is(err, backend.ErrUnsupported) {
		return nil, fmt.Errorf("projector %s: %w; they need llama.cpp", path, err)
	}
	return p, err
}

// load opens the model file at path for the first time: what open loads,
// and what the engine keeps of the model while it is unloaded.
func (e *Engine) load(path, draft string) (*model, error) {
	m := &model{path: path, draftPath: draft}
	perSeq, took, err := e.open(m)
	if err != nil {
		return nil, err
	}
	llm := m.llm
	arch, _ := llm.Meta("general.architecture")
	tmpl, err := newChatTemplate(llm.ChatTemplate(), llm.TokenText(llm.BOS()), llm.TokenText(llm.EOS()))
	if err == nil {
		m.family = family.Lookup(arch, llm.ChatTemplate())
	} else {
		// A template our Jinja cannot read should not make the model
		// unusable: prompts still work, and messages use ChatML. Its
		// family is not guessed from a template it is not rendered with.
		e.cfg.Logger.Warn("inference: using ChatML instead of the model's chat template", "path", path, "err", err)
		tmpl, _ = newChatTemplate("", llm.TokenText(llm.BOS()), llm.TokenText(llm.EOS()))
	}
	m.tmpl = tmpl
	pooling := llm.Pooling()
	m.info = ModelInfo{
		Path:          path,
		Backend:       llm.Backend(),
		Architecture:  arch,
		ContextLength: perSeq,
		TrainContext:  llm.TrainContext(),
		Params:        llm.Params(),
		Size:          llm.Size(),
		ChatTemplate:  llm.ChatTemplate(),
		Encoder:       pooling == backend.PoolingRank,
		Embedding:     m.encoder != nil && pooling != backend.PoolingRank,
		LoadTime:      took,
		WebSearch:     m.runner != nil && e.cfg.Search != nil && m.family != nil && m.family.Tools != nil,
	}
	e.cfg.Logger.Info("inference: model loaded", "path", path, "backend", m.info.Backend, "architecture", arch, "took", took.Round(time.Millisecond))
	m.setFamily(e.cfg.Logger)
	if m.encoder != nil {
		m.info.Pooling = pooling.String()
		if m.info.Embedding {
			m.info.Dimensions = llm.EmbeddingSize()
		}
	}
	return m, nil
}

// setFamily records what the model's family gives the engine: its name
// in the model's info, its thinking markers and the tokens that close a
// thinking section (its Close text, written by the engine, so that its
// special tokens parse as such). It logs the family, or that none
// recognises the chat template.
func (m *model) setFamily(log *slog.Logger) {
	if m.runner == nil {
		m.family = nil // an encoder: it neither chats nor thinks
		return
	}
	f := m.family
	if f == nil {
		log.Warn("inference: chat template not recognised: tools and thinking are off", "path", m.path, "architecture", m.info.Architecture)
		return
	}
	m.info.Family = f.Name
	m.marks = thinkMarksOf(f)
	if f.Thinking != nil && f.Thinking.Close != "" {
		m.thinkClose, _ = m.llm.Tokenize(f.Thinking.Close, true)
	}
	log.Info("inference: model family", "path", m.path, "family", f.Name,
		"thinking", f.Thinking != nil, "tools", f.Tools != nil)
}

// open loads the model's file and makes what serves it: a context and
// its runner, or an encoder, and the projector once one is attached. It
// returns the tokens a sequence holds and the time it took.
func (e *Engine) open(m *model) (perSeq int, took time.Duration, err error) {
	start := time.Now()
	var progress func(float32) bool
	if e.cfg.Progress != nil {
		progress = func(f float32) bool { e.cfg.Progress(m.path, float64(f)); return true }
	}
	load := e.loadBackend
	if e.cfg.load != nil {
		load = e.cfg.load
	}
	llm, err := load(m.path, progress)
	if err != nil {
		return 0, 0, err
	}
	perSeq = min(e.cfg.ContextTokens, llm.TrainContext(), e.cfg.KVTokens)
	if perSeq < e.cfg.ContextTokens {
		e.cfg.Logger.Debug("inference: context capped at the model's training context", "path", m.path, "context", perSeq)
	}
	var projector backend.Projector
	if m.projectorPath != "" {
		if projector, err = loadProjector(m.projectorPath, llm, e.cfg.Threads); err != nil {
			llm.Close()
			return 0, 0, err
		}
	}
	var rn *runner.Runner
	var enc *runner.Encoder
	if pooling := llm.Pooling(); pooling != backend.PoolingNone {
		enc, err = runner.NewEncoder(llm, pooling, max(e.cfg.Batch, perSeq), e.cfg.Threads)
	} else {
		rn, err = e.newRunner(m, llm, perSeq)
	}
	if err != nil {
		if m.draft != nil {
			m.draft.Close()
			m.draft = nil
		}
		if projector != nil {
			projector.Close()
		}
		llm.Close()
		return 0, 0, err
	}
	m.llm, m.runner, m.encoder, m.projector = llm, rn, enc, projector
	return perSeq, time.Since(start), nil
}

// newRunner makes the context of a generative model, its drafter (with
// the draft model, loaded into m.draft) and its runner.
func (e *Engine) newRunner(m *model, llm backend.Model, perSeq int) (*runner.Runner, error) {
	path := m.path
	k, v := e.cfg.keyType, e.cfg.valueType
	var key string
	if e.disk != nil {
		var err error
		if key, err = runner.PrefixKey(path, k.String()+"/"+v.String()); err != nil {
			return nil, err
		}
	}
	drafter, err := e.newDrafter(m, llm, perSeq)
	if err != nil {
		return nil, err
	}
	params := backend.ContextParams{
		Context:   e.cfg.slotCells(perSeq) + e.cfg.BranchContext,
		Batch:     e.cfg.Batch,
		Sequences: e.cfg.Parallel + e.cfg.Branches,
		Threads:   e.cfg.Threads,
		KeyType:   k,
		ValueType: v,
		// The library's choice (Config.FlashAttention): the other
		// backends do not take it.
		FlashAttention: e.cfg.FlashAttention,
	}
	if drafter != nil && !llm.SharesKV() && e.cfg.DraftRecurrent {
		// A recurrent state drops rejected drafts where the backend
		// keeps a snapshot per drafted token (the library's Qwen3.5).
		params.Rollback = runner.DefaultMaxDraft
	}
	ctx, err := llm.NewContext(params)
	if err != nil {
		if drafter != nil {
			drafter.Close() // the caller closes m.draft
		}
		return nil, err
	}
	cfg := e.cfg
	rn := runner.New(llm, ctx, runner.Config{
		Sequences: cfg.Parallel, Branches: cfg.Branches, BranchCells: cfg.BranchContext,
		Context: perSeq, Cells: cfg.slotCells(perSeq), Queue: cfg.Queue,
		TTL: cfg.CacheTTL, Now: cfg.Now, Logger: cfg.Logger,
		Disk: e.disk, DiskKey: key, SaveMin: cfg.saveMin, SaveLong: cfg.saveLong,
		CheckpointBytes: max(cfg.CheckpointBytes, 0), CheckpointEvery: max(cfg.CheckpointEvery, 0),
		Drafter: drafter,
	})
	m.drafts = rn.Drafts()
	return rn, nil
}

// newDrafter makes the drafter of m as Config.Draft says: a draft model
// (loaded into m.draft, in a context with a sequence for each of the
// model's, of as many cells), n-gram lookup, or none (nil).
func (e *Engine) newDrafter(m *model, llm backend.Model, perSeq int) (runner.Drafter, error) {
	switch {
	case e.cfg.drafter != nil:
		return e.cfg.drafter(), nil
	case e.cfg.Draft == DraftNone:
		return nil, nil
	case m.draftPath == "" && e.cfg.Draft == DraftNgram:
		return runner.Ngram{}, nil
	case m.draftPath == "":
		return nil, nil
	}
	load := e.loadBackend
	if e.cfg.load != nil {
		load = e.cfg.load
	}
	draft, err := load(m.draftPath, nil)
	if err != nil {
		return nil, fmt.Errorf("draft model %s: %w", m.draftPath, err)
	}
	if draft.Pooling() != backend.PoolingNone {
		draft.Close()
		return nil, fmt.Errorf("draft model %s: an encoder model, which does not generate", m.draftPath)
	}
	if !draft.SharesKV() {
		// Its state could not drop the target's rejected tokens.
		draft.Close()
		return nil, fmt.Errorf("draft model %s: a recurrent model, whose state cannot roll back rejected drafts", m.draftPath)
	}
	ctx, err := draft.NewContext(backend.ContextParams{
		Context: e.cfg.slotCells(perSeq), Batch: e.cfg.Batch, Sequences: e.cfg.Parallel, Threads: e.cfg.Threads,
	})
	if err != nil {
		draft.Close()
		return nil, fmt.Errorf("draft model %s: %w", m.draftPath, err)
	}
	d, err := runner.NewModelDrafter(llm, draft, ctx, e.cfg.Parallel)
	if err != nil {
		ctx.Close()
		draft.Close()
		return nil, fmt.Errorf("draft model %s: %w", m.draftPath, err)
	}
	m.draft = draft
	return d, nil
}

// free stops the model's runner (which saves its prompt cache's prefixes,
// with a cache directory) and frees what open made.
func (m *model) free() {
	if m.remote != nil {
		m.remote.pool.Close()
		return
	}
	if m.runner != nil {
		m.runner.Stop()
	}
	if m.projector != nil {
		m.projector.Close()
	}
	if m.encoder != nil {
		m.encoder.Close() // after the call at work
	}
	if m.draft != nil {
		m.draft.Close() // after the runner, which closed its context
		m.draft = nil
	}
	m.llm.Close()
	m.llm, m.runner, m.encoder, m.projector = nil, nil, nil, nil
}

// Close ends every request, stops the runners and frees the models. It
// waits for the runners to finish their current step, and, with a cache
// directory, for the prompt cache's prefixes to be saved. A model that a
// call is still reading (tokenizing, encoding an image or an embedding)
// is freed when that call returns, which ends with ErrClosed where it
// would go on to decode.
func (e *Engine) Close() error {
	// End the image decodes under way: the requests that wait for them
	// hold their models.
	e.closeOnce.Do(func() { close(e.closing) })
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	e.res.stopSweeper()
	e.res.close()
	return nil
}

// Models describes the configured models, one entry per catalog entry.
func (e *Engine) Models() []ModelInfo {
	infos := append([]ModelInfo(nil), e.infos...)
	for i := range infos {
		infos[i].Loaded = e.res.loaded(e.names[infos[i].ID])
	}
	return infos
}

// Stats reports, per catalog entry in the order of Models, the requests
// waiting for a sequence and the sequences at work. It reads two counters
// per model and takes no lock that a decode step holds, so that a metrics
// scrape may call it at any time; the numbers may be a step stale. After
// Close, and for a model that is not loaded, it reports zeros.
func (e *Engine) Stats() []ModelStats {
	e.mu.RLock()
	defer e.mu.RUnlock()
	stats := make([]ModelStats, len(e.infos))
	for i, info := range e.infos {
		stats[i].ID = info.ID
		m := e.names[info.ID]
		res := e.res.of[m]
		res.mu.Lock()
		// loaded, read under res.mu, says that no load or unload writes
		// m.runner meanwhile.
		if m.remote != nil && !e.closed {
			for _, r := range m.remote.pool.Status() {
				stats[i].Active += r.InFlight
				stats[i].Replicas = append(stats[i].Replicas, ReplicaStats{URL: r.URL, Healthy: r.Healthy, InFlight: r.InFlight,
					Requests: r.Served, Failures: r.Failed})
			}
		}
		if res.loaded && m.runner != nil && !e.closed {
			st := m.runner.Stats()
			stats[i].Queued, stats[i].Active, stats[i].Sequences = st.Queued, st.Active, st.Sequences
			stats[i].DraftedTokens, stats[i].AcceptedTokens = st.Drafted, st.Accepted
		}
		res.mu.Unlock()
	}
	return stats
}

// CountTokens returns the number of prompt tokens req would use: its
// messages rendered with the model's chat template, or its prompt,
// tokenized with the model's own tokenizer, as Prepare does. It decodes
// nothing, and checks nothing but the prompt: one longer than the context
// fails with ErrContextLength. Images count as the projector makes them.
func (e *Engine) CountTokens(req Request) (int, error) {
	l, err := e.acquire(context.Background(), req.Model)
	if err != nil {
		return 0, err
	}
	defer l.release()
	if l.m.remote != nil {
		return estimateTokens(req), nil
	}
	_, _, n, _, err := l.m.promptInputs(req, req.Format != nil)
	return n, err
}

// promptInputs renders and tokenizes req's prompt (see prompt) and counts
// its input tokens, images included: the text's tokens, one slice more
// than images, the images, their total, and whether the prompt opens a
// thinking section.
func (m *model) promptInputs(req Request, constrained bool) (texts [][]backend.Token, images [][]byte, inputs int, thinking bool, err error) {
	if texts, thinking, err = m.prompt(req, constrained); err != nil {
		return nil, nil, 0, false, err
	}
	for _, t := range texts {
		inputs += len(t)
	}
	images, headers, err := requestImages(req)
	if err != nil {
		return nil, nil, 0, false, err
	}
	n, err := m.imageTokens(headers)
	return texts, images, inputs + n, thinking, err
}

// imageTokens counts the tokens the projector makes of images of these
// headers (with the model's own markers around each): what Run's
// encoding adds to the prompt. It decodes no picture: the count depends
// on an image's size alone (backend.Projector.ImageTokens).
func (m *model) imageTokens(headers []bitmap.Header) (int, error) {
	n := 0
	for i, h := range headers {
		k, err := m.projector.ImageTokens(h.Width, h.Height)
		if err != nil {
			return 0, fieldError(Field("Messages"), "image %d: %v", i, err)
		}
		n += k
	}
	return n, nil
}

// maxDecoders bounds the images that an engine decodes at once, and so
// the memory they take (see bitmap.MaxDecodeBytes).
const maxDecoders = 2

// decodeImage decodes image i of a request in Go (bitmap.Decode), holding
// one of the engine's maxDecoders meanwhile, and not the projector. It
// stops when ctx ends (with ctx's error) or the engine closes (ErrClosed):
// Close ends the decodes under way. A picture that cannot be decoded fails with an
// *ImageError.
func (e *Engine) decodeImage(ctx context.Context, i int, img []byte) (*bitmap.RGB, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-e.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	stopped := func() error {
		select {
		case <-e.closing:
			return ErrClosed
		default:
			return context.Cause(ctx)
		}
	}
	select {
	case e.decoders <- struct{}{}:
	case <-ctx.Done():
		return nil, stopped()
	}
	defer func() { <-e.decoders }()
	if e.onDecode != nil {
		e.onDecode(ctx, img)
	}
	rgb, err := bitmap.Decode(ctx, img)
	switch {
	case ctx.Err() != nil:
		return nil, stopped()
	case err != nil:
		return nil, &ImageError{Index: i, Reason: imageReason(err)}
	}
	return rgb, nil
}

// Generate runs req to the end and returns the result. It takes one
// choice: a request for several fails; Stream yields them all.
func (e *Engine) Generate(ctx context.Context, req Request) (Result, error) {
	if req.Choices > 1 {
		return Result{}, fieldError(Field("Choices"), "Generate returns one result; Stream yields every choice's")
	}
	for ev, err := range e.Stream(ctx, req) {
		if err != nil {
			return Result{}, err
		}
		if ev.Final != nil {
			return *ev.Final, nil
		}
	}
	return Result{}, errors.New("inference: stream ended without a result")
}

// Stream runs req and yields its output as it is generated: pieces of text
// (and of reasoning), then one event whose Final holds the whole result.
// An error, if any, is the last pair. The request is prepared (see
// Prepare) and queued when the iteration starts; stopping early (break)
// or cancelling ctx frees its sequence within one decode step. The
// sequence is single use.
func (e *Engine) Stream(ctx context.Context, req Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		ctx, yield, end := e.traceGeneration(ctx, req, yield)
		defer end()
		l, err := e.acquire(ctx, req.Model)
		if err != nil {
			yield(Event{}, err)
			return
		}
		done := e.tracePrepare(ctx, req.Model)
		p, err := e.prepare(l, req)
		done(err)
		if err != nil {
			l.release()
			yield(Event{}, err)
			return
		}
		e.run(ctx, l, p, yield)
	}
}

// Run runs a request that Prepare prepared, as Stream does, without
// rendering or tokenizing it again.
func (e *Engine) Run(ctx context.Context, p *Prepared) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(Event{}, err)
			return
		}
		if p == nil || p.plan == nil || p.plan.engine != e {
			yield(Event{}, fmt.Errorf("%w: a Prepared not made by this engine's Prepare", ErrInvalidRequest))
			return
		}
		ctx, yield, end := e.traceGeneration(ctx, p.Request, yield)
		defer end()
		l, err := e.acquire(ctx, p.Request.Model)
		if err != nil {
			yield(Event{}, err)
			return
		}
		e.run(ctx, l, p, yield)
	}
}

// run runs p on l's model and releases l: when the request's jobs have
// finished, or, for a request whose tools the engine runs, when its
// last turn has.
func (e *Engine) run(ctx context.Context, l *lease, p *Prepared, yield func(Event, error) bool) {
	if p.plan.tools != nil {
		defer l.release()
		e.toolLoop(ctx, l, p, yield)
		return
	}
	e.runPlain(ctx, l, p, l.release, yield)
}

// runPlain runs a prepared request that does not search, or one turn of
// one that does, on l's model; done, if not nil, runs once its jobs have
// finished, or it has failed before any started.
func (e *Engine) runPlain(ctx context.Context, l *lease, p *Prepared, done func(), yield func(Event, error) bool) {
	yield = e.tracePhases(ctx, yield)
	if l.m.remote != nil {
		if p.Request.Summary != SummaryNone {
			yield = e.summaries(ctx, p.Request, 1, yield)
		}
		e.runRemote(ctx, l.m, p, done, yield)
		return
	}
	jobs, err := e.start(ctx, l.m, p, done)
	if err != nil {
		yield(Event{}, err)
		return
	}
	if p.Request.Summary == SummaryNone {
		streamJobs(ctx, jobs, yield)
		return
	}
	streamJobs(ctx, jobs, e.summaries(ctx, p.Request, len(jobs), yield))
}

// Prepare checks req, renders its messages with the model's chat template
// and tokenizes the prompt, without decoding anything. Every field is
// checked here: an invalid request fails with an error wrapping
// ErrInvalidRequest (a *FieldError where one field is at fault), and one
// whose prompt and output do not fit in the context with
// ErrContextLength. The cost is bounded whatever the request: tokenizing
// stops once the prompt passes the context, and schemas are bounded
// before they are converted to grammars. When the model must load again
// first (Config.KeepAlive unloaded it), Prepare waits for the load only
// until ctx is done.
func (e *Engine) Prepare(ctx context.Context, req Request) (*Prepared, error) {
	l, err := e.acquire(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	defer l.release()
	done := e.tracePrepare(ctx, req.Model)
	p, err := e.prepare(l, req)
	done(err)
	return p, err
}

// prepare is Prepare on the model that l holds.
func (e *Engine) prepare(l *lease, req Request) (*Prepared, error) {
	m := l.m
	turn, plan := req, (*toolPlan)(nil)
	if req.Search != nil || req.MCP != nil {
		var err error
		if turn, plan, err = e.toolTurn(m, req); err != nil {
			return nil, err
		}
	}
	p, err := m.prepare(turn)
	if err != nil {
		return nil, err
	}
	p.plan.engine = e
	if plan != nil {
		// The request runs as its first turn, which shows the search
		// tool (the servers' tools are listed when it runs); its Search
		// and MCP hold the options with their defaults.
		p.Request.Search, p.Request.MCP, p.plan.tools = plan.search, plan.mcp, plan
	}
	return p, nil
}

func (m *model) prepare(req Request) (*Prepared, error) {
	if m.remote != nil {
		return m.prepareRemote(req)
	}
	if m.runner == nil {
		return nil, fmt.Errorf("%w: model %q is an encoder (%s pooling): it ranks (Engine.Rank) or embeds (Engine.Embed) and generates nothing", ErrInvalidRequest, req.Model, m.info.Pooling)
	}
	if _, err := samplerParams(req); err != nil {
		return nil, err
	}
	switch req.Effort {
	case "", string(family.EffortLow), string(family.EffortMedium), string(family.EffortHigh):
	default:
		return nil, fieldError(Field("Effort"), "%q is not low, medium or high", req.Effort)
	}
	if !m.thinks() && req.Effort != "" {
		if !req.ThinkingDefaults {
			return nil, fieldError(Field("Effort"), "%s, so it has no thinking to set an effort for", m.noThinking())
		}
		req.Effort = "" // a wire format's default, for models that think
	}
	if req.ThinkingBudget < 0 {
		return nil, fieldError(Field("ThinkingBudget"), "%d is negative", req.ThinkingBudget)
	}
	if !m.thinks() && req.ThinkingBudget > 0 {
		if !req.ThinkingDefaults {
			return nil, fieldError(Field("ThinkingBudget"), "%s, so it has no thinking to bound", m.noThinking())
		}
		req.ThinkingBudget = 0 // a wire format's default, for models that think
	}
	for i, msg := range req.Messages {
		for _, part := range msg.Content {
			if part.Image == nil && part.URL != "" {
				return nil, fieldError(Field("Messages").At(i), "the image at %q was not fetched: the engine reads Part.Image", part.URL)
			}
		}
	}
	if err := checkSummary(req.Summary); err != nil {
		return nil, err
	}
	switch {
	case req.TopLogprobs < 0 || req.TopLogprobs > MaxTopLogprobs:
		return nil, fieldError(Field("TopLogprobs"), "%d is not within 0 to %d", req.TopLogprobs, MaxTopLogprobs)
	case req.TopLogprobs > 0 && !req.Logprobs && !req.PromptLogprobs:
		return nil, fieldError(Field("TopLogprobs"), "needs Logprobs or PromptLogprobs")
	case req.PromptLogprobs && req.hasImages():
		return nil, fieldError(Field("PromptLogprobs"), "with images in the prompt")
	case req.Choices < 0 || req.Choices > MaxChoices:
		return nil, fieldError(Field("Choices"), "%d is not within 1 to %d", req.Choices, MaxChoices)
	}
	tools := req.shownTools()
	if len(tools) > 0 && (m.family == nil || m.family.Tools == nil) {
		return nil, fieldError(Field("Tools"), "%s", m.noTools())
	}
	for i, t := range tools {
		if len(t.Parameters) > 0 {
			if err := grammar.CheckSchema(t.Parameters); err != nil {
				return nil, fieldError(Field("Tools").At(i).Dot("Parameters"), "%v", err)
			}
		}
	}
	gbnf, err := grammarOf(req.Format)
	if err != nil {
		return nil, err
	}
	switch req.ToolChoice.Mode {
	case ToolAuto, ToolNone:
	case ToolRequired, ToolFunction:
		if len(tools) == 0 {
			return nil, fieldError(Field("ToolChoice"), "%q without tools", req.ToolChoice.Mode)
		}
		if gbnf, err = toolGrammar(m.family, tools, req.ToolChoice); err != nil {
			return nil, err
		}
	default:
		return nil, fieldError(Field("ToolChoice"), "mode %q", req.ToolChoice.Mode)
	}
	if req.IgnoreEOS && gbnf != "" {
		return nil, fieldError(Field("IgnoreEOS"), "with a Format or a required tool call: the grammar's end is the end of the turn")
	}
	texts, images, inputs, thinking, err := m.promptInputs(req, gbnf != "")
	if err != nil {
		return nil, err
	}
	if inputs == 0 {
		return nil, fieldError(Field("Messages"), "the prompt is empty")
	}
	var tokens []backend.Token
	for _, t := range texts {
		tokens = append(tokens, t...)
	}
	limit := m.info.ContextLength
	maxTokens := req.MaxTokens
	if room := limit - inputs; maxTokens == 0 || req.ClampMaxTokens && maxTokens > room {
		maxTokens = room
	}
	if req.PromptOnly {
		maxTokens = 0
	}
	switch {
	case inputs >= limit:
		return nil, &FieldError{Path: Field("Messages"), Err: ErrContextLength,
			Reason: fmt.Sprintf("%d prompt tokens leave no room in the context of %d", inputs, limit)}
	case inputs+maxTokens > limit:
		return nil, &FieldError{Path: Field("MaxTokens"), Err: ErrContextLength,
			Reason: fmt.Sprintf("%d prompt tokens and %d to generate, more than the context of %d", inputs, maxTokens, limit)}
	}
	budget := -1
	switch {
	case !m.thinks():
		// Nothing to switch off or bound.
	case req.NoThinking:
		budget = 0
	case req.ThinkingBudget > 0 && req.ThinkingBudget >= maxTokens && !req.ThinkingDefaults:
		// Anthropic's rule: the answer needs room after the thinking.
		return nil, &FieldError{Path: Field("ThinkingBudget"), Err: ErrInvalidRequest,
			Reason: fmt.Sprintf("%d thinking tokens leave no room under the output limit of %d", req.ThinkingBudget, maxTokens)}
	case req.ThinkingBudget > 0:
		// A default leaves the answer a quarter of the output limit.
		budget = req.ThinkingBudget
		if req.ThinkingDefaults {
			budget = min(budget, max(1, maxTokens*3/4))
		}
	}
	pl := &plan{prompt: tokens, thinking: thinking, grammar: gbnf, budget: budget}
	if len(images) > 0 {
		pl.prompt, pl.texts, pl.images = nil, texts, images
	}
	return &Prepared{
		Request:         req,
		InputTokens:     inputs,
		MaxOutputTokens: maxTokens,
		plan:            pl,
	}, nil
}

// unrecognised is why a model that no family recognises has neither
// tools nor thinking.
const unrecognised = "the model's chat template is not one inferkit recognises, so its tools and thinking are off"

// thinks reports whether the model's family thinks.
func (m *model) thinks() bool { return m.family != nil && m.family.Thinking != nil }

// noThinking says why the model cannot think, for errors.
func (m *model) noThinking() string {
	if m.family == nil {
		return unrecognised
	}
	return fmt.Sprintf("the model is of the %s family, which does not think", m.family.Name)
}

// noTools says why the model cannot call tools, for errors.
func (m *model) noTools() string {
	if m.family == nil {
		return unrecognised
	}
	return fmt.Sprintf("the model is of the %s family, which does not call tools", m.family.Name)
}

// start queues a prepared request on m's runner, which a lease holds:
// one work per choice, whose jobs share a wake channel. done, if not nil,
// runs once the jobs have finished, or before start returns an error.
func (e *Engine) start(ctx context.Context, m *model, p *Prepared, done func()) (jobs []*runner.Job, err error) {
	defer func() {
		if err != nil && done != nil {
			done()
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req := p.Request
	prompt, spans, err := e.promptOf(ctx, m, p)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // encoding the images took a while
	}
	works := make([]*runner.Work, max(1, req.Choices))
	for i := range works {
		if works[i], err = m.work(p, i, prompt, spans); err != nil {
			for _, w := range works[:i] {
				w.Close()
			}
			return nil, err
		}
	}
	jobs = runner.NewJobs(ctx, len(works), done)
	done = nil // the jobs run it now
	for i, w := range works {
		w.Job = jobs[i]
		if err := m.runner.Submit(w); err != nil {
			// The runner drops the choices already queued; those not
			// queued end here.
			err = submitError(err, req.Model, m.runner)
			for _, j := range jobs {
				j.Cancel()
			}
			for k, w := range works[i:] {
				w.Close()
				jobs[i+k].Fail(err)
			}
			return nil, err
		}
	}
	return jobs, nil
}

// submitError is the engine's error for a runner's refusal to queue a
// request for the model named name.
func submitError(err error, name string, r *runner.Runner) error {
	if errors.Is(err, runner.ErrQueueFull) {
		return fmt.Errorf("%w: model %q has %d requests waiting", ErrOverloaded, name, r.QueueCap())
	}
	return runnerError(err)
}

// promptOf returns a prepared request's prompt on m: its tokens, or,
// with images, its text's tokens and each image decoded and encoded in
// place (withImages), as many tokens as Prepare counted.
func (e *Engine) promptOf(ctx context.Context, m *model, p *Prepared) ([]backend.Token, []runner.ImageSpan, error) {
	if len(p.plan.images) == 0 {
		return p.plan.prompt, nil, nil
	}
	prompt, spans, err := e.withImages(ctx, m, p.plan.texts, p.plan.images)
	if err != nil {
		return nil, nil, messagesImageError(err)
	}
	if len(prompt) != p.InputTokens {
		return nil, nil, fmt.Errorf("inference: the images made a prompt of %d tokens, %d were counted", len(prompt), p.InputTokens)
	}
	return prompt, spans, nil
}

// messagesImageError is err, an *ImageError about the images of a
// request's messages, as the field error that names them.
func messagesImageError(err error) error {
	if ie, ok := errors.AsType[*ImageError](err); ok {
		return fieldError(Field("Messages"), "image %d: %s", ie.Index, ie.Reason)
	}
	return err
}

// work makes the work of choice i of a prepared request, whose prompt
// promptOf gave: its sampler (seeded Seed+i when the request has a seed),
// grammar, and what its output is parsed with.
func (m *model) work(p *Prepared, i int, prompt []backend.Token, spans []runner.ImageSpan) (*runner.Work, error) {
	req := p.Request
	if req.Speculative != nil && *req.Speculative && !m.drafts {
		return nil, fieldError(Field("Speculative"), "the model drafts nothing: it has no drafter (Config.Draft, catalog.Model.Draft), or a recurrent state that drafts only with Config.DraftRecurrent, where its backend rolls it back")
	}
	sp, err := samplerParams(req)
	if err != nil {
		return nil, err
	}
	if req.Seed != nil {
		sp.Seed += uint32(i)
	}
	tools := req.shownTools()
	w := &runner.Work{Prompt: prompt, Images: spans, MaxTokens: p.MaxOutputTokens, Stops: req.Stop, Thinking: p.plan.thinking,
		ThinkClose: m.thinkClose, Budget: p.plan.budget, Logprobs: req.Logprobs, Top: req.TopLogprobs,
		PromptLP: req.PromptLogprobs, NoOutput: req.PromptOnly,
		Family: m.family, Tools: familyTools(tools), Single: req.ToolChoice.Single,
		Speculative: m.drafts && (req.Speculative == nil || *req.Speculative)}
	if slices.ContainsFunc(tools, isSearchTool) {
		// A search turn: a call of the search tool is bounded, also
		// where no grammar forces it.
		w.MaxCall, w.BoundCall = searchCallBytes, SearchToolName
	}
	if p.plan.grammar != "" {
		if w.Grammar, err = m.llm.NewGrammar(p.plan.grammar); err != nil {
			return nil, fieldError(Field("Format"), "%v", err)
		}
	}
	if req.IgnoreEOS {
		sp.Ban = m.llm.EOGTokens()
	}
	if w.Sampler, err = m.llm.NewSampler(sp); err != nil {
		w.Close()
		return nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	return w, nil
}

// grammarOf returns the GBNF grammar of a format, or "" for free text.
func grammarOf(f *Format) (string, error) {
	switch {
	case f == nil:
		return "", nil
	case f.Grammar != "":
		// Converted schemas are checked by SchemaGrammar; a caller's
		// grammar is checked here, before any admission.
		if err := grammar.Check(f.Grammar); err != nil {
			return "", fieldError(Field("Format", "Grammar"), "%v", err)
		}
		return f.Grammar, nil
	case f.Schema != nil:
		g, err := schemaGrammar(f.Schema) // checks the schema's bounds first
		if err != nil {
			return "", fieldError(Field("Format", "Schema"), "%v", err)
		}
		return g, nil
	case f.JSON:
		g, err := schemaGrammar([]byte(`{"type":"object"}`))
		if err != nil {
			return "", fmt.Errorf("inference: the JSON grammar: %w", err)
		}
		return g, nil
	}
	return "", nil
}

// prompt renders and tokenizes the request's prompt, and reports whether
// it leaves the model inside a thinking section. A constrained answer on a
// model that thinks gets its thinking section opened here, so that the
// grammar applies after it. Tokenizing stops with ErrContextLength once
// the prompt passes the context.
//
// A prompt with images gives the tokens of its text around them, one
// more slice than images; its images are encoded when it runs.
func (m *model) prompt(req Request, constrained bool) ([][]backend.Token, bool, error) {
	limit := m.info.ContextLength
	if len(req.Messages) == 0 {
		if req.Prompt == "" {
			return nil, false, fieldError(Field("Messages"), "neither messages nor a prompt")
		}
		tokens, err := m.tokenize(req.Prompt, true, limit)
		return [][]backend.Token{tokens}, m.marks.opensThinking(req.Prompt), err
	}
	// An image stands in the rendered text as a marker that request text
	// cannot forge: its nonce is drawn here.
	var marker string
	var image func() string
	if m.projector != nil {
		marker = "[[" + strconv.FormatUint(rand.Uint64(), 10) + ":image]]"
		image = func() string { return marker }
	}
	text, err := m.render(req, image)
	if err != nil {
		return nil, false, err
	}
	thinking := m.marks.opensThinking(text)
	if open, close := m.marks.open, m.marks.close; constrained && !thinking && !req.NoThinking && open != "" && m.thinkClose != nil &&
		!strings.HasSuffix(strings.TrimRight(text, "\n"), close) {
		text += open + "\n"
		thinking = true
	}
	pieces := []string{text}
	if marker != "" {
		pieces = strings.Split(text, marker)
	}
	// Templates usually write the BOS text themselves; it is added only
	// where the model wants it and the template left it out.
	texts := make([][]backend.Token, len(pieces))
	n := 0
	for i, piece := range pieces {
		if texts[i], err = m.tokenize(piece, i == 0, limit-n); err != nil {
			return nil, false, err
		}
		n += len(texts[i])
	}
	return texts, thinking, nil
}

// samplerParams checks the request's sampling fields and fills defaults.
func samplerParams(req Request) (backend.SamplerParams, error) {
	p := backend.SamplerParams{
		Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05,
		RepeatLastN:      64,
		RepeatPenalty:    float32(req.RepetitionPenalty),
		FrequencyPenalty: float32(req.FrequencyPenalty),
		PresencePenalty:  float32(req.PresencePenalty),
		Seed:             rand.Uint32(),
	}
	bad := func(field string, v any) error {
		return fieldError(Field(field), "%v out of range", v)
	}
	if req.MaxTokens < 0 {
		return p, bad("MaxTokens", req.MaxTokens)
	}
	if t := req.Temperature; t != nil {
		if *t < 0 || *t > 100 {
			return p, bad("Temperature", *t)
		}
		p.Temperature = float32(*t)
	}
	if v := req.TopP; v != nil {
		if *v < 0 || *v > 1 {
			return p, bad("TopP", *v)
		}
		p.TopP = float32(*v)
	}
	if v := req.MinP; v != nil {
		if *v < 0 || *v > 1 {
			return p, bad("MinP", *v)
		}
		p.MinP = float32(*v)
	}
	if v := req.TopK; v != nil {
		if *v < 0 {
			return p, bad("TopK", *v)
		}
		p.TopK = *v
	}
	if v := req.Seed; v != nil {
		p.Seed = uint32(*v)
	}
	if req.RepetitionPenalty < 0 {
		return p, bad("RepetitionPenalty", req.RepetitionPenalty)
	}
	if v := req.FrequencyPenalty; v < -2 || v > 2 {
		return p, bad("FrequencyPenalty", v)
	}
	if v := req.PresencePenalty; v < -2 || v > 2 {
		return p, bad("PresencePenalty", v)
	}
	return p, nil
}

// toolGrammar returns the GBNF grammar that forces calls of tools in f's
// format, for ToolRequired and ToolFunction: one call of the named tool,
// or one or more calls of any of them (one with choice.Single). The
// tools' JSON Schemas become GBNF through llama.cpp's converter.
func toolGrammar(f *family.Family, tools []Tool, choice ToolChoice) (string, error) {
	name := ""
	if choice.Mode == ToolFunction {
		name = choice.Name
		if !slices.ContainsFunc(tools, func(t Tool) bool { return t.Name == name }) {
			return "", fieldError(Field("ToolChoice"), "names %q, which is not among the tools", name)
		}
	}
	g, err := f.Tools.Grammar(familyTools(tools), name, choice.Mode == ToolFunction || choice.Single, schemaGrammar)
	if err != nil {
		return "", fieldError(Field("Tools"), "parameters: %v", err)
	}
	// Each tool's grammar is within bounds; all of them together may not
	// be, and the whole reaches either backend's grammar engine.
	if err := grammar.Check(g); err != nil {
		return "", fieldError(Field("Tools"), "%v", err)
	}
	return g, nil
}

// familyTools are tools as the family package takes them.
func familyTools(tools []Tool) []family.Tool {
	out := make([]family.Tool, len(tools))
	for i, t := range tools {
		out[i] = family.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	return out
}
