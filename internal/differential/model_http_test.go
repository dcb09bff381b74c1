package differential

import (
	"net/http"
	"strconv"
)

// The model of troupehttp.Handler in front of a script's stack
// (script.http): each caller is an HTTP request, and the downstream is a
// handler that writes its outcome when it runs to its end (200 and the
// value, or 500 for its error; nothing when its context ended first or it
// panicked). Once the handler wrote, the client gets that, whatever the
// stack's outcome; otherwise Handler answers the stack's error as
// troupehttp.ErrorHandler does: 499 when the client's own context had
// ended, else by the error's class (troupehttp.StatusOf), with a
// Retry-After of 1 s (advice rounds up to seconds) for a 503 and for a
// rate limit's 429 (its windows are shorter than a second); a success
// with nothing written (a Fallback's value) is net/http's default, an
// empty 200.

// write notes what the handler of the caller's request wrote for the
// downstream's outcome o.
func (c *mcaller) write(o outcome) {
	switch {
	case c.wrote != 0:
	case o.err == "":
		c.wrote, c.wroteV = http.StatusOK, o.v
	case o.err == "leaf":
		c.wrote = http.StatusInternalServerError
	}
}

// response is what the client got.
func (c *mcaller) response() outcome {
	switch {
	case c.wrote == http.StatusOK:
		return response(c.wrote, "", strconv.Itoa(c.wroteV))
	case c.wrote != 0:
		return response(c.wrote, "", "")
	case c.endedAtRet != "":
		return response(499, "", "Client Closed Request\n")
	case c.out.err == "":
		return response(http.StatusOK, "", "")
	}
	code, wait := http.StatusBadGateway, ""
	switch c.out.err {
	case "timeout", "deadline":
		code = http.StatusGatewayTimeout
	case "open", "overloaded":
		code, wait = http.StatusServiceUnavailable, "1"
	case "limited", "limited/deadline":
		code, wait = http.StatusTooManyRequests, "1" // the next unit within a second
	case "canceled":
		code = 499
	case "panic":
		code = http.StatusInternalServerError
	}
	return response(code, wait, http.StatusText(code)+"\n")
}
