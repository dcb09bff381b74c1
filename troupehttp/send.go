package troupehttp

import (
	"net/http"

	"github.com/troupe-go/troupe/actors"
)

// Send returns the leaf service that sends each request with rt
// (http.DefaultTransport when rt is nil): the leaf of a stack inside a
// Transport, and of any stack that should see every response as the
// server sent it. It follows no redirect (a 302 is a response, returned
// to the caller as it is), keeps no cookies and takes every request rt
// takes, a server's request forwarded by httputil.ReverseProxy (RequestURI
// set) included: the request is handed to rt.RoundTrip unchanged but for
// its context (a shallow copy with the call's context, when that
// differs) and, with the BaseURL option, its URL and Host (the copy goes
// to the base URL: the leaf of a balancer's endpoint).
//
// Like every actors.Func, the call runs on the goroutine of the caller
// that made it, may block, and is bounded by the call's context: the
// request is sent with the context the stages hand down (a Timeout's, a
// hedge attempt's), which replaces the request's own and keeps its values
// (an httptrace.ClientTrace, such as the one ReverseProxy uses to forward
// 1xx responses, still reaches rt).
//
// What the outcome means, and who owns the response's body, is as for
// Client (the options are the same): an error of rt is an error with no
// response, matching ErrCallEnded once the call's context had ended and
// troupe.ErrPermanent when no retry can cure it (a certificate rt does not
// trust, an unsupported scheme, an invalid header or method, a URL without
// a host); every response is a response whatever its status, and those of
// HoldStatus come back held. A RoundTripper that breaks its contract by
// returning neither a response nor an error gives ErrNilResponse; one that
// returns both has the response's body closed and its error kept.
//
// The service is safe for concurrent use if rt is (net/http's Transport
// is).
func Send(rt http.RoundTripper, opts ...ClientOption) *actors.FuncService[*http.Request, *http.Response] {
	if rt == nil {
		rt = http.DefaultTransport
	}
	l, bad := newLeaf("troupehttp.Send", opts)
	if l == nil {
		return bad
	}
	l.rt = rt
	return actors.Func(l.do, "troupehttp.Send")
}
