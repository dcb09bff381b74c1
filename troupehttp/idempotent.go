package troupehttp

import (
	"errors"
	"net"
	"net/http"

	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/loadshed"
)

// IsIdempotent reports whether req may be sent again after an attempt
// that may have reached the server, by net/http's own rule (the one its
// Transport follows before it retries a request on a new connection): its
// method is GET, HEAD, OPTIONS or TRACE (an empty method is GET), or its
// header has an Idempotency-Key or X-Idempotency-Key entry (even an empty
// one, which net/http does not send). PUT and DELETE, idempotent by RFC
// 9110, are not, as for net/http: a handler that makes them safe to repeat
// says so with the header, or a Policy's Idempotent says so for it.
// IsIdempotent is safe for concurrent use.
func IsIdempotent(req *http.Request) bool {
	if req == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return key || xkey
}

// NotSent reports whether err shows that the request never left: the
// connection could not be made (a dial error, the host's name did not
// resolve), or a stage refused it before it reached the leaf (a LoadShed
// shed it, a Breaker was open). Such a request may be sent again whatever
// its method; an error after the request may have been written (a reset,
// a timeout, an unexpected EOF) is not one of these. NotSent is safe for
// concurrent use.
func NotSent(err error) bool {
	if err == nil {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, loadshed.ErrOverloaded) || errors.Is(err, breaker.ErrOpen)
}
