package httpapi

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/formats/messages"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/ratelimit"
)

// encoder is a format's stream encoder.
type encoder interface {
	Event(inference.Event) error
	Fail(error) error
}

// chat serves POST /v1/chat/completions and /v1/web/chat/completions.
func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	req, err := h.parse(r, chat.Parse)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	g, err := h.admit(w, r, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Stream {
		sw := newSSEWriter(w)
		h.stream(sw, r, g, chat.NewStream(sw, req, h.opts), nil)
		return
	}
	if results, ok := h.complete(w, r, g); ok {
		h.writeJSON(w, r, chat.NewCompletion(req, results, h.opts))
	}
}

// messages serves POST /v1/messages.
func (h *Handler) messages(w http.ResponseWriter, r *http.Request) {
	req, err := h.parse(r, messages.Parse)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Cache != nil {
		if req.Cache.Tokens, err = h.cacheTokens(r, req); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	g, err := h.admit(w, r, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Stream {
		sw := newSSEWriter(w)
		enc := messages.NewStream(sw, req, h.opts)
		enc.InputTokens = g.p.InputTokens // message_start's usage.input_tokens
		h.stream(sw, r, g, enc, nil)
		return
	}
	if results, ok := h.complete(w, r, g); ok {
		h.writeJSON(w, r, messages.NewMessage(req, results[0], h.opts))
	}
}

// cacheTokens counts the prompt tokens of the prefix that req's cache
// breakpoint ends (formats.CachePoint.Tokens), which the usage of its
// answer counts as written to the cache: the prefix's own prompt, as the
// engine counts it (images fetched), less the end of it that the whole
// prompt does not share, the template's generation prompt, where the
// engine can render and tokenize prompts (prompter).
func (h *Handler) cacheTokens(r *http.Request, req formats.Request) (int, error) {
	ir := req.Prefix(*req.Cache).Inference()
	if err := h.fetchImages(r, &ir); err != nil {
		return 0, err
	}
	n, err := h.engine.CountTokens(ir)
	if err != nil {
		return 0, err
	}
	p, ok := h.engine.(prompter)
	if !ok {
		return n, nil
	}
	prefix, err := promptTokens(p, ir)
	if err != nil {
		return 0, err
	}
	whole, err := promptTokens(p, req.Inference())
	if err != nil {
		return 0, err
	}
	shared := 0
	for shared < min(len(prefix), len(whole)) && prefix[shared] == whole[shared] {
		shared++
	}
	return n - (len(prefix) - shared), nil
}

// prompter renders and tokenizes prompts without decoding them, as
// *inference.Engine does: an Engine that is one counts a cache
// breakpoint's prefix exactly (see cacheTokens).
type prompter interface {
	RenderPrompt(req inference.Request) (string, error)
	Tokenize(model, text string) ([]int, error)
}

// promptTokens returns the tokens of req's prompt text.
func promptTokens(p prompter, req inference.Request) ([]int, error) {
	text, err := p.RenderPrompt(req)
	if err != nil {
		return nil, err
	}
	return p.Tokenize(req.Model, text)
}

// countTokens serves POST /v1/messages/count_tokens: {"input_tokens": n}
// for a messages body, n being what POST /v1/messages counts as its
// input for the same body (system, tools and the thinking switch
// rendered through the template), as the engine prepares it. It
// generates nothing, so it reserves one request and no tokens, and
// max_tokens neither bounds nor fails the count.
func (h *Handler) countTokens(w http.ResponseWriter, r *http.Request) {
	req, err := h.parse(r, messages.Parse)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Stream {
		h.fail(w, r, &formats.RequestError{Param: "stream", Message: "stream: counting tokens does not stream"})
		return
	}
	ir := req.Inference()
	ir.MaxTokens, ir.ClampMaxTokens = 1, false
	_, p, err := h.prepare(r, req.Model, ir)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, r, messages.TokenCount{InputTokens: p.InputTokens})
}

// parse reads the body and parses it with the style's parser, and gives
// the access log the end user it names (Identity.EndUser).
func (h *Handler) parse(r *http.Request, parse func([]byte) (formats.Request, error)) (formats.Request, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return formats.Request{}, err
	}
	req, err := parse(body)
	if slot, ok := r.Context().Value(identitySlotKey{}).(*Identity); ok && err == nil {
		slot.EndUser = cmp.Or(req.User, req.SafetyIdentifier)
	}
	return req, err
}

// generation is an admitted request: what settles it and the events of
// its choices.
type generation struct {
	// p settles the request: its Request and InputTokens (every prompt's,
	// for legacy completions).
	p       *inference.Prepared
	a       *admission // nil without limits
	choices int
	events  iter.Seq2[inference.Event, error]
}

// admit checks the request, prepares it with the engine (every field
// checked, the prompt rendered and tokenized once) and, under rate
// limits, reserves the request, its prompt tokens and the most output
// tokens its choices can generate (see ratelimit.go). An invalid request
// is refused before any reservation, whatever the key's tier. The
// engine's request carries the style's reasoning, output format and tool
// choice (formats.Request.Inference).
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, req formats.Request) (*generation, error) {
	m, p, err := h.prepare(r, req.Model, req.Inference())
	if err != nil {
		return nil, err
	}
	inputs, outputs := reservation(p)
	a, err := h.reserve(w, r, m, inputs, outputs, images(p.Request))
	if err != nil {
		return nil, err
	}
	return &generation{p: p, a: a, choices: choicesOf(p.Request), events: h.engine.Run(r.Context(), p)}, nil
}

// choicesOf is the number of choices a request runs.
func choicesOf(req inference.Request) int { return max(1, req.Choices) }

// prepare prepares ir, a request for the chat model named name, within
// the catalog's output limit, once the images it names by URL are
// fetched.
func (h *Handler) prepare(r *http.Request, name string, ir inference.Request) (catalog.Model, *inference.Prepared, error) {
	m, _, ok := h.chatModel(name)
	if !ok {
		return catalog.Model{}, nil, formats.UnknownModel(name)
	}
	if err := h.allowMCP(ir.MCP); err != nil {
		return catalog.Model{}, nil, err
	}
	if err := h.fetchImages(r, &ir); err != nil {
		return catalog.Model{}, nil, err
	}
	if m.MaxOutput > 0 && ir.MaxTokens > m.MaxOutput {
		if !ir.ClampMaxTokens {
			return catalog.Model{}, nil, &inference.FieldError{Path: inference.Field("MaxTokens"),
				Reason: fmt.Sprintf("%d is more than this model's output limit of %d tokens", ir.MaxTokens, m.MaxOutput)}
		}
		ir.MaxTokens = m.MaxOutput
	}
	// A client that leaves while its model loads again stops the wait.
	p, err := h.engine.Prepare(r.Context(), ir)
	return m, p, err
}

// summaryInstructionTokens bounds the tokens of a summary's instruction
// and template, beyond the thinking it reads.
const summaryInstructionTokens = 128

// searchTurnTokens bounds the tokens that one search adds to the
// conversation beyond its results' text: the call, the tool message's
// markup and numbering.
const searchTurnTokens = 128

// reservation is the most a prepared request may use: its prompt tokens
// and each choice's output limit, and, when it asks for a summary, each
// choice's thinking read again under a short instruction and the
// summary's bound. A request that searches reads its prompt again after
// each search, with the results of every search so far: the k-th search
// reserves the prompt again and k searches' results, at a token per two
// characters, more than English text takes. The turns' calls are left
// out, as small; settling counts what the turns really read. The output
// limit bounds the turns' output together.
func reservation(p *inference.Prepared) (inputs, outputs int64) {
	n := int64(choicesOf(p.Request))
	inputs, outputs = int64(p.InputTokens), int64(p.MaxOutputTokens)*n
	if l := p.Request.Summary; l != inference.SummaryNone {
		inputs += (int64(p.MaxOutputTokens) + summaryInstructionTokens) * n
		outputs += int64(inference.MaxSummaryTokens(l)) * n
	}
	if s := p.Request.Search; s != nil {
		results := int64(s.Results)*int64(s.ContentChars/2+searchTurnTokens) + searchTurnTokens
		m := int64(s.MaxSearches)
		inputs += m*int64(p.InputTokens) + m*(m+1)/2*results
	}
	return inputs, outputs
}

// reserve reserves, under rate limits and at model m's prices, one
// request of inputs prompt tokens, up to outputs tokens of output and
// pictures images; the admission is nil without limits.
func (h *Handler) reserve(w http.ResponseWriter, r *http.Request, m catalog.Model, inputs, outputs, pictures int64) (*admission, error) {
	a := admissionFrom(r)
	if a == nil {
		return nil, nil
	}
	cost, err := prices(m.Pricing)
	if err != nil {
		return nil, err
	}
	want := ratelimit.Request{InputTokens: inputs, MaxOutputTokens: outputs, Images: pictures, Prices: cost}
	if err := a.reserve(w, r, want); err != nil {
		return nil, err
	}
	return a, nil
}

// generated accumulates what a generation produced, for the usage of one
// that ends without a result: its text, and the searches it ran, whose
// results the model read.
type generated struct {
	text     strings.Builder
	steps    int
	searches []inference.SearchCall // ended
}

func (g *generated) add(ev inference.Event) {
	g.text.WriteString(ev.Reasoning)
	g.text.WriteString(ev.Text)
	g.steps++
	if s := ev.Search; s != nil && s.Status != inference.SearchSearching {
		g.searches = append(g.searches, *s)
	}
}

// settle settles a's reservation at the end of a generation of p: with
// the result's usage, or, without one, with what was generated. A generation whose client went away before its first token
// is charged its prompt (the engine may have processed it all); one the
// engine refused counts as a request without tokens or cost. A result
// also goes to the metrics (observeGeneration).
func (h *Handler) settle(r *http.Request, a *admission, p *inference.Prepared, res *inference.Result, g *generated) {
	h.observeGeneration(p, res)
	ir, n := p.Request, p.InputTokens
	switch {
	case a == nil:
	case res != nil:
		a.settle(r, usageOf(ir, res.Usage))
	case g.steps == 0 && r.Context().Err() != nil:
		// The client left before the first token; the engine may well
		// have processed the whole prompt by then: it is charged.
		a.settle(r, ratelimit.Usage{Requests: 1, InputTokens: int64(n), Images: images(ir)})
	case g.steps == 0:
		a.settle(r, ratelimit.Usage{})
	default:
		out := g.steps // the engine's events hold one token or more each
		if k, err := h.engine.CountTokens(inference.Request{Model: ir.Model, Prompt: g.text.String()}); err == nil && k > out {
			out = k
		}
		// After each search the model read its prompt again, and the
		// results.
		in := n * (1 + len(g.searches))
		if len(g.searches) > 0 {
			chars := 0 // titles and URLs, when the request's options are unknown
			if ir.Search != nil {
				chars = ir.Search.ContentChars
			}
			var read strings.Builder // what the model read of them
			for _, s := range g.searches {
				read.WriteString(s.Text(chars))
			}
			k, err := h.engine.CountTokens(inference.Request{Model: ir.Model, Prompt: read.String()})
			if err != nil {
				k = read.Len() / 2 // longer than a context: the reservation's estimate
			}
			in += k
		}
		a.settle(r, ratelimit.Usage{Requests: 1, InputTokens: int64(in), OutputTokens: int64(out), Images: images(ir)})
	}
}

// finals gathers the results of a request's choices as its events bring
// them.
type finals struct {
	results []inference.Result
	got     int
}

func newFinals(choices int) *finals {
	return &finals{results: make([]inference.Result, choices)}
}

// add records ev's result, if it has one, and reports whether every choice
// has ended. An event of a choice that does not exist, or a second result
// of one, is the engine's fault and an error.
func (f *finals) add(ev inference.Event) (bool, error) {
	if ev.Final == nil {
		return false, nil
	}
	if ev.Choice < 0 || ev.Choice >= len(f.results) || f.results[ev.Choice].FinishReason != "" {
		return false, fmt.Errorf("httpapi: the engine ended choice %d of %d twice or out of range", ev.Choice, len(f.results))
	}
	f.results[ev.Choice] = *ev.Final
	f.got++
	return f.got == len(f.results), nil
}

// combined is the result that settles the request: its choices' usage
// together, each prompt counted once (the first choice of a prompt has
// Choice 0 modulo the prompt's choices), with the first choice's timings.
func (f *finals) combined(perPrompt int) *inference.Result {
	res := f.results[0]
	res.Usage = inference.ChoicesUsage(f.results, perPrompt)
	return &res
}

// complete runs a blocking request to the end of every choice. On failure
// it writes the error and reports false.
func (h *Handler) complete(w http.ResponseWriter, r *http.Request, gen *generation) ([]inference.Result, bool) {
	p, a := gen.p, gen.a
	var (
		err  error
		g    generated
		f    = newFinals(gen.choices)
		done bool
	)
	for ev, serr := range gen.events {
		if serr != nil {
			err = serr
			break
		}
		if ev.Final == nil {
			g.add(ev)
		}
		if done, err = f.add(ev); done || err != nil {
			break
		}
	}
	var res *inference.Result
	switch {
	case done:
		res = f.combined(choicesOf(p.Request))
	case err == nil:
		err = errors.New("httpapi: the engine's stream ended without a result")
	}
	h.settle(r, a, p, res, &g)
	if err != nil {
		h.fail(w, r, err)
		return nil, false
	}
	return f.results, true
}

// stream runs a streaming request through enc, which writes to sw. The
// headers wait for the engine's first event, so that an error before any
// output (an unknown model, a full queue, a prompt too long) is a status
// and a JSON body; after them an error is the stream's error event. When
// set, final is called with the result once enc has encoded its last
// events and before they are sent, so that a stored response exists when
// the client reads the end of the stream. It reports whether the stream
// ended with every choice's result.
func (h *Handler) stream(sw *sseWriter, r *http.Request, gen *generation, enc encoder, final func(inference.Result)) bool {
	p, a := gen.p, gen.a
	var (
		done     bool
		streamed error // the engine's error
		written  error // a write to the client failed
		g        generated
		f        = newFinals(gen.choices)
	)
	for ev, err := range gen.events {
		if err != nil {
			streamed = err
			break
		}
		if ev.Final == nil {
			g.add(ev)
		}
		if done, streamed = f.add(ev); streamed != nil {
			break
		}
		if done {
			h.settle(r, a, p, f.combined(choicesOf(p.Request)), &g) // before the client reads the end
		}
		sw.start()
		sw.hold = done && final != nil
		if written = enc.Event(ev); written != nil {
			break
		}
		if done && final != nil {
			final(f.results[0])
		}
		if written = sw.flush(); written != nil {
			break
		}
		if done {
			break
		}
	}
	if !done {
		h.settle(r, a, p, nil, &g)
	}
	switch {
	case done && written == nil:
		return true
	case written != nil:
		h.log.LogAttrs(r.Context(), slog.LevelDebug, "httpapi: stream write failed; the client has gone",
			slog.String("path", r.URL.Path), slog.Any("err", written))
		return false
	case streamed == nil:
		streamed = errors.New("httpapi: the engine's stream ended without a result")
	}
	if !sw.started {
		h.fail(sw.w, r, streamed)
		return false
	}
	logError(h.log, r, streamed)
	sw.hold = false
	if err := enc.Fail(streamed); err == nil {
		_ = sw.flush()
	}
	return false
}

// sseWriter writes a Server-Sent Events stream: the headers before the
// first event, a flush after each. While hold is set, writes are kept
// until the next flush.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	hold    bool
	held    bytes.Buffer
}

func newSSEWriter(w http.ResponseWriter) *sseWriter {
	return &sseWriter{w: w, rc: http.NewResponseController(w)}
}

// start sends the stream's headers once.
func (s *sseWriter) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

func (s *sseWriter) Write(b []byte) (int, error) {
	if s.hold {
		return s.held.Write(b)
	}
	return s.w.Write(b)
}

// flush sends what was held and flushes the connection.
func (s *sseWriter) flush() error {
	if s.held.Len() > 0 {
		_, err := s.w.Write(s.held.Bytes())
		s.held.Reset()
		if err != nil {
			return err
		}
	}
	s.hold = false
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// allowMCP refuses the MCP servers of a request that Config.MCPAllow
// does not allow, and servers started as commands, which no request may
// name.
func (h *Handler) allowMCP(opts *inference.MCPOptions) error {
	if opts == nil {
		return nil
	}
	for i, s := range opts.Servers {
		path := inference.Field("MCP", "Servers").At(i).Dot("URL")
		switch {
		case len(s.Command) > 0:
			return &inference.FieldError{Path: path, Reason: "a request names its MCP servers by URL"}
		case len(h.mcpAllow) == 0:
			return &inference.FieldError{Path: path, Reason: fmt.Sprintf("MCP server %q: this server allows no MCP servers", s.Label)}
		case !slices.ContainsFunc(h.mcpAllow, func(p string) bool { return strings.HasPrefix(s.URL, p) }):
			return &inference.FieldError{Path: path, Reason: fmt.Sprintf("MCP server %q at %s is not among the servers this server allows", s.Label, s.URL)}
		}
	}
	return nil
}
