package troupehttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// ClientOption configures the Client leaf. An option is a function value
// with no state of its own: it is safe for concurrent use.
type ClientOption func(*clientConfig)

// clientConfig is the leaf's configuration; set by Client, then read-only.
type clientConfig struct {
	hold  []int // statuses whose bodies are held in memory
	limit int64 // the most bytes held per body
	bad   error // an option's error: Client's service refuses to be built
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
			c.bad = fmt.Errorf("troupehttp: Client: HoldLimit(%d) is negative: %w", n, troupe.ErrBadConfig)
		}
		c.limit = n
	}
}

// Client returns the leaf service that sends each request with c
// (http.DefaultClient when c is nil). A bad option (a nil one, a negative
// HoldLimit) makes a service that Build refuses with an error matching
// troupe.ErrBadConfig. Like every actors.Func, the call runs
// on the goroutine of the caller that made it, may block, and is bounded by
// the call's context: the request is sent with the context the stages hand
// down (a Timeout's derived context, say), which replaces the request's own.
//
// What the outcome means:
//
//   - An error from c.Do (a transport error, a refused redirect, a cancelled
//     context) is an error, and no response comes with it. When the call's
//     context had ended by then, the error also matches ErrCallEnded.
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
// must close its body, as with http.Client.Do. A stage that drops an
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
// The request itself is not modified (the leaf sends a shallow copy when
// the context differs); its body is closed by c's transport, as always.
//
// The service is safe for concurrent use if c is (an *http.Client is).
func Client(c *http.Client, opts ...ClientOption) *actors.FuncService[*http.Request, *http.Response] {
	if c == nil {
		c = http.DefaultClient
	}
	l := &leaf{c: c, cfg: clientConfig{hold: defaultRetryStatuses, limit: DefaultHoldLimit}}
	for i, o := range opts {
		if o == nil {
			l.cfg.bad = fmt.Errorf("troupehttp: Client: option %d of %d is nil: %w", i+1, len(opts), troupe.ErrBadConfig)
			break
		}
		o(&l.cfg)
	}
	if l.cfg.bad != nil {
		return stagekit.BadFunc[*http.Request, *http.Response]("troupehttp.Client", l.cfg.bad)
	}
	return actors.Func(l.do, "troupehttp.Client")
}

// leaf is the Client's function; its fields are set by Client, then
// read-only.
type leaf struct {
	c   *http.Client
	cfg clientConfig
}

func (l *leaf) do(ctx context.Context, req *http.Request) (*http.Response, error) {
	if req == nil {
		return nil, ErrNilRequest
	}
	if ctx != nil && !sameContext(ctx, req.Context()) {
		req = req.WithContext(ctx)
	}
	res, err := l.c.Do(req)
	if err != nil {
		// c.Do returns a response with an error only for a refused
		// redirect, and has closed its body then.
		return nil, ended(req.Context(), err)
	}
	if slices.Contains(l.cfg.hold, res.StatusCode) {
		if err := HoldBody(res, l.cfg.limit); err != nil && !errors.Is(err, ErrBodyTooLarge) {
			return nil, ended(req.Context(), err)
		}
	}
	return res, nil
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
