// Package advice is a server's advice on when its client may try again
// (HTTP's Retry-After header, gRPC's retry pushback) for troupehttp and
// troupegrpc: reading and writing the wait as a whole number of units, and
// how their retry policies honour it.
//
// Everything here is a plain function, safe for concurrent use.
package advice

import (
	"errors"
	"strconv"
	"time"

	"github.com/troupe-go/troupe/stages/retry"
)

// Forever is the longest wait a Duration holds: advice of more reads as
// this much, more than anyone waits.
const Forever = time.Duration(1<<63 - 1)

// Parse reads s, a decimal whole number of units (unit > 0) with an
// optional sign, as a wait. A number a Duration cannot hold saturates at
// Forever (at -Forever when negative). As with strconv.ParseInt, whose
// error it returns, a number beyond int64 is an error matching
// strconv.ErrRange, with the wait saturated all the same; anything else
// that is not such a number is one matching strconv.ErrSyntax, with a zero
// wait.
func Parse(s string, unit time.Duration) (time.Duration, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, err
	}
	switch limit := int64(Forever / unit); {
	case n > limit:
		return Forever, err
	case n < -limit:
		return -Forever, err
	}
	return time.Duration(n) * unit, err
}

// Format writes d as a decimal whole number of units, rounded up, so that
// a client waiting that long waits at least d; a negative d as 0.
func Format(d, unit time.Duration) string {
	if d <= 0 {
		return "0"
	}
	n := d / unit
	if d%unit != 0 {
		n++
	}
	return strconv.FormatInt(int64(n), 10)
}

// Retry is the decision of a retry policy that honours a server's advice,
// over the Attempts a it embeds: the outcome *res, *err of an attempt of
// *req. limit is the policy's cap on the waits it honours (zero means def;
// a negative one ignores advice, and read is not called); read returns the
// wait the outcome advises, and whether it advises one (a negative wait
// asks for no retry at all).
//
// An outcome that Retryable accepts (nil: any error) and whose advice asks
// for no retry, or for longer than the cap, is not retried: the caller
// gets it as it is. Any other goes to a.Retry; a retry it allows waits the
// longer of its backoff and the advice. The session's wait for it ends
// early, as every retry's does, when the request's context ends.
func Retry[Req, Res any](a *retry.Attempts[Req, Res], req *Req, res *Res, err *error,
	limit, def time.Duration, read func() (time.Duration, bool)) (retry.Wait, bool) {
	var wait time.Duration
	advised := false
	if limit >= 0 {
		wait, advised = read()
	}
	if limit == 0 {
		limit = def
	}
	if advised && (wait < 0 || wait > limit) && accepts(a, *res, *err) {
		return retry.Wait{}, false // asked not to retry, or to wait too long
	}
	w, again := a.Retry(req, res, err)
	if again && advised {
		w.Delay = max(w.Delay, wait)
	}
	return w, again
}

// accepts reports whether a's Retryable accepts the outcome.
func accepts[Req, Res any](a *retry.Attempts[Req, Res], res Res, err error) bool {
	if a.Retryable == nil {
		return err != nil
	}
	return a.Retryable(res, err)
}
