package httpapi

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
)

// encoder is a format's stream encoder.
type encoder interface {
	Event(inference.Event) error
	Fail(error) error
}

// chat serves POST /v1/chat/completions and /v1/web/chat/completions.
func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	req, err := h.parse(r, formats.ParseChatRequest)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Stream {
		sw := newSSEWriter(w)
		h.stream(sw, r, req, formats.NewChatStream(sw, req, h.opts), nil)
		return
	}
	if res, ok := h.complete(w, r, req); ok {
		h.writeJSON(w, r, formats.NewChatCompletion(req, res, h.opts))
	}
}

// messages serves POST /v1/messages.
func (h *Handler) messages(w http.ResponseWriter, r *http.Request) {
	req, err := h.parse(r, formats.ParseMessagesRequest)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Stream {
		sw := newSSEWriter(w)
		h.stream(sw, r, req, formats.NewMessagesStream(sw, req, h.opts), nil)
		return
	}
	if res, ok := h.complete(w, r, req); ok {
		h.writeJSON(w, r, formats.NewMessage(req, res, h.opts))
	}
}

// parse reads the body and parses it with the style's parser.
func (h *Handler) parse(r *http.Request, parse func([]byte) (formats.Request, error)) (formats.Request, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return formats.Request{}, err
	}
	return parse(body)
}

// prepare checks the request's model and returns the engine's request.
//
// The engine reads neither the reasoning, the output format nor the tool
// choice yet: they are not passed on (and not faked).
func (h *Handler) prepare(req formats.Request) (inference.Request, error) {
	if _, _, ok := h.chatModel(req.Model); !ok {
		return inference.Request{}, formats.UnknownModel(req.Model)
	}
	return req.Inference(), nil
}

// complete runs a blocking request. On failure it writes the error and
// reports false.
func (h *Handler) complete(w http.ResponseWriter, r *http.Request, req formats.Request) (inference.Result, bool) {
	ir, err := h.prepare(req)
	if err != nil {
		h.fail(w, r, err)
		return inference.Result{}, false
	}
	res, err := h.engine.Generate(r.Context(), ir)
	if err != nil {
		h.fail(w, r, err)
		return inference.Result{}, false
	}
	return res, true
}

// stream runs a streaming request through enc, which writes to sw. The
// headers wait for the engine's first event, so that an error before any
// output (an unknown model, a full queue, a prompt too long) is a status
// and a JSON body; after them an error is the stream's error event. When
// set, final is called with the result once enc has encoded its last
// events and before they are sent, so that a stored response exists when
// the client reads the end of the stream. It reports whether the stream
// ended with a result.
func (h *Handler) stream(sw *sseWriter, r *http.Request, req formats.Request, enc encoder, final func(inference.Result)) bool {
	ir, err := h.prepare(req)
	if err != nil {
		h.fail(sw.w, r, err)
		return false
	}
	var (
		done     bool
		streamed error // the engine's error
		written  error // a write to the client failed
	)
	for ev, err := range h.engine.Stream(r.Context(), ir) {
		if err != nil {
			streamed = err
			break
		}
		sw.start()
		sw.hold = ev.Final != nil && final != nil
		if written = enc.Event(ev); written != nil {
			break
		}
		if ev.Final != nil {
			done = true
			if final != nil {
				final(*ev.Final)
			}
		}
		if written = sw.flush(); written != nil {
			break
		}
		if done {
			break
		}
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
	h.logError(r, streamed)
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
