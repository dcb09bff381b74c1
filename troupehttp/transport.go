package troupehttp

import (
	"net/http"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// TransportOption configures a Transport. Options are plain values, safe
// for concurrent use.
type TransportOption func(*roundTripper)

// HoldUntilBodyClosed makes a response hold its stages until its body is
// closed or read to its end (or fails), instead of until its headers
// arrive: a Limit's permit and an Adaptive's go back then, and so does what
// any stage keeps through stagekit.WithHold (a shared budget's lease), so
// that a gateway's limit counts the responses still streaming to its
// clients, server-sent events and upgraded connections included. A
// response with nothing to stream (an error, a HEAD's or a 204's empty
// body, a body the leaf held in memory) gives them back at once; so does
// every attempt a retry drops, whose response is held.
//
// The default is tower's: a stage's permit goes back when the outcome (the
// response's headers) passes it, and the body streams afterwards
// uncounted. Either way a Timeout bounds the wait for the headers only,
// and the body is bounded by the request's own context.
//
// With the option, a response whose body is never closed keeps its
// permits for good, as it keeps its connection: close every body (as
// httputil.ReverseProxy and http.Client's callers must anyway). The body
// RoundTrip returns is then a wrapper of the leaf's, which keeps its
// io.Writer for a 101 Switching Protocols (ReverseProxy's upgrade).
func HoldUntilBodyClosed() TransportOption { return func(t *roundTripper) { t.hold = true } }

// Transport returns an http.RoundTripper that sends every request through
// svc, any troupe stack over a Send leaf (or any other leaf), so that the
// stack can sit inside an http.Client or an httputil.ReverseProxy:
//
//	stack, err := stages.Stack[*http.Request, *http.Response]().
//		Limit(64).Timeout(10 * time.Second).Layer(troupehttp.Retry(3, bo)).
//		Build(sys, troupehttp.Send(http.DefaultTransport))
//	proxy := &httputil.ReverseProxy{Rewrite: rewrite,
//		Transport: troupehttp.Transport(stack), ErrorHandler: troupehttp.ErrorHandler}
//
// End the stack in Send, not Client: Send sends with a RoundTripper, so
// that the Transport follows no redirect and keeps no cookies (the
// http.Client it sits in does, when it should); a Client leaf follows its
// http.Client's redirects inside the transport.
//
// RoundTrip calls svc with the request's context (troupe.Do: it waits in
// the stack's line for a slot when every one is taken), so a cancelled
// request gives up wherever it is. It keeps the http.RoundTripper
// contract:
//
//   - it takes every request net/http's Transport takes, a server's request
//     forwarded by ReverseProxy (RequestURI set) included, and does not
//     interpret the response: every response is returned with a nil error,
//     whatever its status, a redirect included (with a Send leaf; a stage
//     of the stack may of course decide otherwise, as a retry of a 503
//     does);
//   - it handles no redirect, authentication or cookie itself;
//   - it does not modify the request: the leaf sends a shallow copy with
//     the stages' context, and a retry stage sends copies (CloneRequest);
//   - the request's body is closed, on errors by RoundTrip itself (closing
//     it again is harmless for the bodies net/http makes), otherwise by the
//     leaf's transport, possibly after RoundTrip returns (a full-duplex
//     body streams while the response does); copies of it made with
//     GetBody for later attempts are never sent if no attempt follows;
//   - exactly one of the response and the error is non-nil: a service
//     that returns both has the response's body closed and only the error
//     returned; one that returns neither gives ErrNilResponse;
//   - errors are returned unwrapped, so troupe's sentinels (troupe.ErrClosed,
//     timeout.ErrTimeout, retry.ErrExhausted, ...) match errors.Is on the
//     http.Client's error too, through its *url.Error; ErrorHandler answers
//     them for a ReverseProxy.
//
// The response's body belongs to the caller of RoundTrip (for an
// http.Client, the caller of Do), who must close it; with
// HoldUntilBodyClosed, closing it (or reading it to its end) gives the
// stages' permits back.
//
// The RoundTripper is safe for concurrent use (troupe services are).
func Transport(svc troupe.Service[*http.Request, *http.Response], opts ...TransportOption) http.RoundTripper {
	t := &roundTripper{svc: svc}
	for _, o := range opts {
		if o != nil {
			o(t)
		}
	}
	return t
}

// roundTripper is Transport's RoundTripper; its fields are set once, then
// read-only.
type roundTripper struct {
	svc  troupe.Service[*http.Request, *http.Response]
	hold bool // HoldUntilBodyClosed
}

// RoundTrip implements http.RoundTripper.
func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req == nil {
		return nil, ErrNilRequest
	}
	if t.svc == nil {
		return nil, closeRequest(req, ErrNilService)
	}
	ctx := req.Context()
	var h *stagekit.Hold
	if t.hold {
		ctx, h = stagekit.WithHold(ctx, streams)
	}
	res, err := troupe.Do(ctx, t.svc, req)
	if err != nil || res == nil {
		if h != nil {
			h.Release()
		}
		if err == nil {
			err = ErrNilResponse
		} else if res != nil && res.Body != nil {
			_ = res.Body.Close()
		}
		return nil, closeRequest(req, err)
	}
	if h != nil {
		holdBody(res, h)
	}
	return res, nil
}

// closeRequest closes req's body, as RoundTrip must on errors, and returns
// err.
func closeRequest(req *http.Request, err error) error {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return err
}
