package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"syscall"
	"time"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
)

// Defaults of RemoteImages.
const (
	// DefaultMaxImageBytes bounds each fetched image: 10 MiB.
	DefaultMaxImageBytes = 10 << 20
	// DefaultImageFetchTimeout bounds fetching a request's images: 10 s.
	DefaultImageFetchTimeout = 10 * time.Second
	// DefaultMaxRemoteImages bounds the image URLs of one request: 8.
	DefaultMaxRemoteImages = 8
)

// RemoteImages lets requests name images by http or https URL (chat
// image_url, messages url sources, responses input_image), which the
// Handler fetches before it prepares the request, and so before rate
// limits admit it: the bounds here are what one request may cost. Zero
// fields take the defaults noted. It is read-only once given to New.
type RemoteImages struct {
	// MaxBytes bounds each image's size; a larger one is refused (400).
	// 0 means DefaultMaxImageBytes.
	MaxBytes int64
	// Timeout bounds fetching all of a request's images, which are
	// fetched one after the other. 0 means DefaultImageFetchTimeout.
	Timeout time.Duration
	// MaxImages bounds the image URLs of one request. 0 means
	// DefaultMaxRemoteImages.
	MaxImages int
	// Allow reports whether a URL may be fetched, redirects included:
	// an operator's list of hosts. Nil allows every URL.
	Allow func(*url.URL) bool
	// AllowPrivate lets fetches reach loopback, private, link-local and
	// other non-public addresses, which are refused by default so that a
	// request cannot make the server read its own network.
	AllowPrivate bool
}

// imageFetcher fetches the images of requests under a RemoteImages'
// bounds. It is safe for concurrent use.
type imageFetcher struct {
	cfg    RemoteImages
	client *http.Client
}

func newImageFetcher(cfg RemoteImages) (*imageFetcher, error) {
	if cfg.MaxBytes < 0 || cfg.Timeout < 0 || cfg.MaxImages < 0 {
		return nil, fmt.Errorf("httpapi: RemoteImages has a negative bound: %+v", cfg)
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxImageBytes
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultImageFetchTimeout
	}
	if cfg.MaxImages == 0 {
		cfg.MaxImages = DefaultMaxRemoteImages
	}
	dialer := &net.Dialer{Timeout: cfg.Timeout}
	if !cfg.AllowPrivate {
		// Checked on the address dialled, after DNS: a public name that
		// resolves to a private address is refused too.
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !public(ap.Addr()) {
				return errNotPublic
			}
			return nil
		}
	}
	f := &imageFetcher{cfg: cfg}
	f.client = &http.Client{
		Transport: &http.Transport{DialContext: dialer.DialContext, Proxy: nil, MaxIdleConns: 16, IdleConnTimeout: time.Minute},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return &redirectError{errors.New("more than 5 redirects")}
			}
			if err := f.check(req.URL); err != nil {
				return &redirectError{fmt.Errorf("a redirect: %w", err)}
			}
			return nil
		},
	}
	return f, nil
}

// public reports whether a is a public unicast address.
func public(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsGlobalUnicast() && !a.IsPrivate() && !a.IsLoopback() && !a.IsLinkLocalUnicast() &&
		!slices.ContainsFunc(reserved, func(p netip.Prefix) bool { return p.Contains(a) })
}

// reserved are the ranges that IsGlobalUnicast admits but that are no
// public Internet: shared address space, benchmarking, documentation,
// and IPv6's unique-local and NAT64 ranges.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// check refuses a URL that is not http or https or that Allow refuses.
func (f *imageFetcher) check(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("the scheme %q is not http or https", u.Scheme)
	}
	if f.cfg.Allow != nil && !f.cfg.Allow(u) {
		return errors.New("the server does not fetch from this address")
	}
	return nil
}

// fetchImages fetches, into Image, every image that ir's messages name by
// URL. Without RemoteImages such a request is refused. The parts are
// replaced, not written: ir's slices may be shared with the caller's.
func (h *Handler) fetchImages(r *http.Request, ir *inference.Request) error {
	param := "messages"
	if styleOf(r) == formats.StyleResponses {
		param = "input"
	}
	type at struct{ msg, part int }
	var named []at
	for i, m := range ir.Messages {
		for k, p := range m.Content {
			if p.Image == nil && p.URL != "" {
				named = append(named, at{i, k})
			}
		}
	}
	if len(named) == 0 {
		return nil
	}
	f := h.images
	if f == nil {
		return imageError(param, ir.Messages[named[0].msg].Content[named[0].part].URL,
			errors.New("this server does not fetch image URLs; send the image as a data: URL (base64)"))
	}
	if len(named) > f.cfg.MaxImages {
		return &formats.RequestError{Param: param, Code: "invalid_value",
			Message: fmt.Sprintf("the request names %d image URLs, at most %d", len(named), f.cfg.MaxImages)}
	}
	ctx, cancel := context.WithTimeout(r.Context(), f.cfg.Timeout)
	defer cancel()
	ir.Messages = slices.Clone(ir.Messages)
	for _, a := range named {
		m := &ir.Messages[a.msg]
		m.Content = slices.Clone(m.Content)
		img, err := f.fetch(ctx, m.Content[a.part].URL)
		if err != nil {
			return imageError(param, m.Content[a.part].URL, err)
		}
		m.Content[a.part].Image = img
	}
	return nil
}

// fetch reads the image at raw, within the fetcher's bounds.
func (f *imageFetcher) fetch(ctx context.Context, raw string) ([]byte, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if err := f.check(u); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "image/*")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, f.doError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the server answered %s", resp.Status)
	}
	if resp.ContentLength > f.cfg.MaxBytes {
		return nil, fmt.Errorf("%d bytes, more than the %d an image may have", resp.ContentLength, f.cfg.MaxBytes)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > f.cfg.MaxBytes {
		return nil, fmt.Errorf("more than the %d bytes an image may have", f.cfg.MaxBytes)
	}
	return b, nil
}

// errNotPublic is the dialer's refusal of an address that is not public.
var errNotPublic = errors.New("httpapi: the address is not public")

// redirectError is CheckRedirect's refusal of a redirect, whose message is
// the fetcher's own.
type redirectError struct{ err error }

func (e *redirectError) Error() string { return e.err.Error() }
func (e *redirectError) Unwrap() error { return e.err }

// doError says why the request for an image failed, in words of the
// fetcher's own: never the transport's error, which names the addresses
// that the image's host resolved to (the server's view of the network,
// which is no business of the client's); the caller names the URL.
func (f *imageFetcher) doError(err error) error {
	var redirect *redirectError
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("not fetched within %v", f.cfg.Timeout)
	case errors.As(err, &redirect):
		return redirect
	case errors.Is(err, errNotPublic):
		return errors.New("its host (or a host it redirects to) is not public")
	case errors.As(err, &dns):
		return errors.New("its host (or a host it redirects to) was not found")
	case errors.As(err, &op) && op.Op == "dial":
		return errors.New("its host (or a host it redirects to) could not be reached")
	}
	return errors.New("the connection to its host failed")
}

// imageError is the 400 of an image URL that could not be fetched, in the
// request's parameter param.
func imageError(param, u string, err error) error {
	const most = 200
	if len(u) > most {
		u = u[:most] + "..."
	}
	return &formats.RequestError{Param: param, Code: "invalid_image_url", Message: fmt.Sprintf("the image at %q: %v", u, err)}
}
