package troupehttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// ClientOption configures the Send and Client leaves. An option is a
// function value with no state of its own: it is safe for concurrent use.
type ClientOption func(*clientConfig)

// clientConfig is the leaf's configuration; set by Send or Client, then
// read-only.
type clientConfig struct {
	hold  []int    // statuses whose bodies are held in memory
	limit int64    // the most bytes held per body
	base  *url.URL // BaseURL's: where every request goes; nil: where its URL says
	bad   error    // an option's error: Client's service refuses to be built
}

// defaultRetryStatuses are the statuses worth another attempt: 429 Too
// Many Requests and the 5xx a healthy replica may not return.
var defaultRetryStatuses = []int{
	http.StatusTooManyRequests,
	http.StatusInternalServerError,
	http.StatusBadGateway,
	http.StatusServiceUnavailable,
	http.StatusGatewayTimeout,
}

// HoldStatus sets the statuses whose response bodies the leaf reads into
// memory (see HoldBody) before returning the response; by default 429,
// 500, 502, 503 and 504, the statuses Retryable retries. HoldStatus() with
// no code holds nothing. Hold every status your retry policy retries: a
// policy of this package retries a status only on a held response.
func HoldStatus(codes ...int) ClientOption {
	codes = slices.Clone(codes)
	return func(c *clientConfig) { c.hold = codes }
}

// HoldLimit sets the most bytes of a body the leaf holds in memory
// (default DefaultHoldLimit). A longer body is not held: the response comes
// back with its connection, unread, and is not retried. A negative n is a
// configuration error (see Client).
func HoldLimit(n int64) ClientOption {
	return func(c *clientConfig) {
		if n < 0 && c.bad == nil {
			c.bad = &troupe.ConfigError{Stage: "troupehttp.Client", Option: "HoldLimit", Value: n, Why: "must not be negative"}
		}
		c.limit = n
	}
}

// Client returns a leaf service that sends each request with c
// (http.DefaultClient when c is nil): for users who want an http.Client's
// own handling as the leaf, its redirects followed (its CheckRedirect
// policy), its cookie jar, its Timeout. It is not what Transport's setup
// uses: a RoundTripper must not follow redirects, so a stack inside a
// Transport should end in Send, which sends with an http.RoundTripper and
// returns every response, a 302 included, as net/http's Transport does. A
// bad option (a nil one, a negative HoldLimit) makes a service that Build
// refuses with an error matching troupe.ErrBadConfig.
//
// Like every actors.Func, the call runs on the goroutine of the caller
// that made it, may block, and is bounded by the call's context: the
// request is sent with the context the stages hand down (a Timeout's
// derived context, say), which replaces the request's own.
//
// What the outcome means:
//
//   - An error from c.Do (a transport error, a refused redirect, a cancelled
//     context) is an error, and no response comes with it. When the call's
//     context had ended by then, the error also matches ErrCallEnded; an
//     error no retry can cure (a redirect c refused, as after too many;
//     a certificate c does not trust; a request c cannot send: an
//     unsupported scheme, an invalid header) matches troupe.ErrPermanent.
//   - Every response is a response, whatever its status: a 404 or a 503
//     comes back with a nil error, and a retry policy decides what to do
//     with it (see Retryable).
//   - For the statuses of HoldStatus, the leaf reads the body into memory
//     and closes the connection's body (HoldBody), up to HoldLimit bytes,
//     before returning: such a response can be dropped by a retry without
//     leaking a connection, and still read in full by whoever gets it. A
//     read error while holding is an error (as a transport error). A body
//     longer than the limit is left unread and unheld.
//
// Response body ownership: a response the leaf returns belongs to whoever
// receives the outcome; at the top of the stack that is the caller, who
// must close its body, as with http.Client.Do. The body is read after the
// call has returned, through any stack, with the context the request was
// sent with: the stages no longer end it once the response is delivered,
// and only the caller's own context bounds the read (a Timeout bounds the
// wait for the response's headers, not the body). A stage that drops an
// outcome owns what it drops: Retry drops the responses of retried
// attempts, and RetryPolicy retries only held responses, which need no
// closing (closing a held body is harmless and does nothing: close every
// body you get, as usual). A Timeout drops a late response after
// cancelling the call's context, which makes the transport close its
// connection. An outcome dropped because a stage failed (a panic) or was
// aborted by Close while the call ran is closed by nobody: an unheld body
// then keeps its connection until the call's context ends, or for good if
// it never does.
//
// The request itself is not modified: the leaf sends a shallow copy when
// the context differs, or when the request is one a server received
// (RequestURI set, as httputil.ReverseProxy forwards it), which
// http.Client refuses: the copy has no RequestURI; with BaseURL, the copy
// has a URL of its own, pointing at the base URL. Its body is closed by
// c's transport, as always.
//
// The service is safe for concurrent use if c is (an *http.Client is).
func Client(c *http.Client, opts ...ClientOption) *actors.FuncService[*http.Request, *http.Response] {
	if c == nil {
		c = http.DefaultClient
	}
	l, bad := newLeaf("troupehttp.Client", opts)
	if l == nil {
		return bad
	}
	l.c = c
	return actors.Func(l.do, "troupehttp.Client")
}

// leaf is the function of the Client and Send leaves: exactly one of c and
// rt is set. Its fields are set by Client or Send, then read-only.
type leaf struct {
	c   *http.Client
	rt  http.RoundTripper
	cfg clientConfig
}

// newLeaf applies opts to a leaf of the given name; a bad option gives,
// instead, the service Build refuses.
func newLeaf(name string, opts []ClientOption) (*leaf, *actors.FuncService[*http.Request, *http.Response]) {
	l := &leaf{cfg: clientConfig{hold: defaultRetryStatuses, limit: DefaultHoldLimit}}
	for i, o := range opts {
		if o == nil {
			l.cfg.bad = &troupe.ConfigError{Stage: name, Option: fmt.Sprintf("option %d of %d", i+1, len(opts)), Why: "nil"}
			break
		}
		o(&l.cfg)
	}
	if l.cfg.bad != nil {
		return nil, (*actors.FuncService[*http.Request, *http.Response])(stagekit.BadFunc[*http.Request, *http.Response](name, l.cfg.bad))
	}
	return l, nil
}

func (l *leaf) do(ctx context.Context, req *http.Request) (*http.Response, error) {
	if req == nil {
		return nil, ErrNilRequest
	}
	out := req
	if ctx != nil && !sameContext(ctx, req.Context()) {
		out = req.WithContext(ctx) // a shallow copy
	}
	if l.c != nil && out.RequestURI != "" {
		if out == req {
			out = req.WithContext(req.Context())
		}
		out.RequestURI = "" // http.Client refuses a server's request
	}
	if l.cfg.base != nil {
		if out == req {
			out = req.WithContext(req.Context())
		}
		rebase(out, l.cfg.base)
	}
	res, err := l.send(out)
	if err != nil {
		return nil, ended(out.Context(), markPermanent(out, l.c != nil && res != nil, err))
	}
	if res == nil {
		return nil, ErrNilResponse
	}
	if slices.Contains(l.cfg.hold, res.StatusCode) {
		if err := HoldBody(res, l.cfg.limit); err != nil && !errors.Is(err, ErrBodyTooLarge) {
			return nil, ended(out.Context(), err)
		}
	}
	return res, nil
}

// send sends req with the leaf's client or RoundTripper. A response that
// comes with an error has its body closed already (http.Client's refused
// redirect), or has it closed here (a RoundTripper breaking its
// contract).
func (l *leaf) send(req *http.Request) (*http.Response, error) {
	if l.rt != nil {
		res, err := l.rt.RoundTrip(req)
		if err != nil && res != nil && res.Body != nil {
			_ = res.Body.Close()
		}
		return res, err
	}
	return l.c.Do(req)
}

// ended marks err as the error of a call whose context had ended, if it
// had (see ErrCallEnded). NOTE: RetryOn relies on the mark to stop a retry
// stage from sending an attempt that nobody would run (policy.go).
func ended(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &endedError{err: err}
	}
	return err
}

// sameContext reports whether a and b are the same context. Only pointer
// contexts are compared: comparing interfaces holding values that are not
// comparable panics, and a false "different" costs one shallow copy.
func sameContext(a, b context.Context) bool {
	t := reflect.TypeOf(a)
	return t != nil && t.Kind() == reflect.Pointer && t == reflect.TypeOf(b) && a == b
}
