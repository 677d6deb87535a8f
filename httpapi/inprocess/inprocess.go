// Package inprocess sends a request to an http.Handler in the same
// process and keeps its answer, bounded: how the parts built on an
// inferkit API (MCP tools, code review) call its routes, so that its
// authentication, limits, spend, metrics and traces apply to them as to
// any client's request.
package inprocess

import (
	"bytes"
	"fmt"
	"net/http"
)

// Answer is a handler's answer: its status (200 where it wrote none),
// header and body.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do serves r on h and returns the answer, or an error when its body
// passes max bytes. r needs a Body (http.NoBody for none), as a
// server's request has.
func Do(h http.Handler, r *http.Request, max int) (Answer, error) {
	if r.Body == nil {
		r.Body = http.NoBody
	}
	w := &recorder{header: http.Header{}, max: max}
	h.ServeHTTP(w, r)
	if w.over {
		return Answer{}, fmt.Errorf("inprocess: the answer of %s %s is longer than %d bytes", r.Method, r.URL.Path, max)
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return Answer{Status: w.status, Header: w.header, Body: w.body.Bytes()}, nil
}

// recorder keeps an answer, up to max bytes.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	max    int
	over   bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.body.Len()+len(b) > r.max {
		r.over = true
		return 0, fmt.Errorf("inprocess: the answer is longer than %d bytes", r.max)
	}
	return r.body.Write(b)
}
