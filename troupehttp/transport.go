package troupehttp

import (
	"net/http"

	"github.com/troupe-go/troupe"
)

// Transport returns an http.RoundTripper that sends every request through
// svc, any troupe stack over a Client leaf (or any other leaf), so that the
// stack can sit inside an http.Client:
//
//	hc := &http.Client{Transport: troupehttp.Transport(stack)}
//
// RoundTrip reserves svc with the request's context, then calls it with
// that context: a full stage makes RoundTrip wait, a cancelled request
// gives up wherever it is. It follows the http.RoundTripper contract:
//
//   - the request is not modified (stages below may send copies of it);
//   - exactly one of the response and the error is non-nil: a service
//     that returns both has the response's body closed and only the error
//     returned; one that returns neither gives ErrNilResponse;
//   - on every error the request's body is closed by RoundTrip (closing it
//     again is harmless for the bodies net/http makes); on success the body
//     belongs to the service (a Client leaf's transport closes it);
//   - errors are returned unwrapped, so troupe's sentinels (troupe.ErrClosed,
//     timeout.ErrTimeout, retry.ErrExhausted, ...) match errors.Is on the
//     http.Client's error too, through its *url.Error.
//
// The response's body belongs to the caller of RoundTrip (for an
// http.Client, the caller of Do), who must close it.
//
// The RoundTripper is safe for concurrent use (troupe services are).
func Transport(svc troupe.Service[*http.Request, *http.Response]) http.RoundTripper {
	return &roundTripper{svc: svc}
}

// roundTripper is Transport's RoundTripper; svc is set once, then read-only.
type roundTripper struct {
	svc troupe.Service[*http.Request, *http.Response]
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
	p, err := t.svc.Reserve(ctx)
	if err != nil {
		return nil, closeRequest(req, err)
	}
	res, err := p.Call(ctx, req)
	if err != nil {
		if res != nil && res.Body != nil {
			_ = res.Body.Close()
		}
		return nil, closeRequest(req, err)
	}
	if res == nil {
		return nil, closeRequest(req, ErrNilResponse)
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
