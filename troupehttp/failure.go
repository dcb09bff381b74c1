package troupehttp

import (
	"context"
	"errors"
	"net/http"
)

// IsFailure is the breaker classifier for HTTP (breaker.Classify's
// isFailure, over *http.Response):
//
//	stages.Stack[*http.Request, *http.Response]().Breaker(breaker.Classify(troupehttp.IsFailure))
//
// A response of status 500 or above is a failure, whatever its body; every
// other response (a 404, a 429) is a success: the server answered. Every
// error is a failure (a transport error, a Timeout's inside the breaker, a
// permanent error) but the caller's own cancellation (context.Canceled,
// or ErrCallEnded: the call's context had ended), which is neither: the
// breaker does not count the outcome of a call whose caller gave up, and
// IsFailure does not call it a failure should it see one. It never reads
// a body and is safe for concurrent use.
func IsFailure(res *http.Response, err error) bool {
	if err != nil {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, ErrCallEnded)
	}
	return res != nil && res.StatusCode >= 500
}
