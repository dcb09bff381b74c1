package troupehttp

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/troupe-go/troupe/internal/advice"
	"github.com/troupe-go/troupe/stages/retry"
)

// DefaultMaxRetryAfter is the longest wait a response's Retry-After header
// may ask of a Policy whose MaxRetryAfter is zero.
const DefaultMaxRetryAfter = time.Minute

// RetryAfter returns how long res asks its client to wait before another
// request: its Retry-After header (RFC 9110, section 10.2.3), either a
// number of seconds or an HTTP date. A date is read against the response's
// own Date header when it has one (the server's clock), else against now;
// a date in the past asks for no wait. ok is false when res has no
// Retry-After header or it does not parse.
func RetryAfter(res *http.Response, now time.Time) (wait time.Duration, ok bool) {
	if res == nil {
		return 0, false
	}
	v := strings.TrimSpace(res.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		d, err := advice.Parse(v, time.Second)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, false
		}
		return d, true // a number too large for an int64 too: more than anyone waits
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if d, err := http.ParseTime(res.Header.Get("Date")); err == nil {
		now = d
	}
	return max(at.Sub(now), 0), true
}

// Policy is the retry policy RetryPolicy returns: retry.Attempts over HTTP
// requests and responses that also honours a retried response's
// Retry-After header. The wait before a retry is the longer of the backoff's
// and the header's; a response that asks for more than MaxRetryAfter is not
// retried: the caller gets it (a 429 or a 503, body readable), since
// waiting that long would hold the request, and its slots, for longer than
// the caller is likely to wait.
//
// Each retry session works on its own copy of the value (see retry.Policy).
//
// Each session works on its own copy, so a Policy need not be safe for concurrent use; what its copies share must be.
type Policy struct {
	retry.Attempts[*http.Request, *http.Response]
	// MaxRetryAfter caps the wait a Retry-After header may ask for; zero
	// means DefaultMaxRetryAfter, a negative value ignores the header.
	MaxRetryAfter time.Duration
	// Idempotent says which requests may be sent again after an attempt
	// that may have reached the server; nil means IsIdempotent (net/http's
	// rule). A request it refuses is retried only after an error NotSent
	// accepts. func(*http.Request) bool { return true } retries every
	// request Retryable accepts, POST included. It must be safe for
	// concurrent use.
	Idempotent func(*http.Request) bool
}

// Retry implements retry.Policy.
func (p *Policy) Retry(req **http.Request, res **http.Response, err *error) (retry.Wait, bool) {
	if !p.idempotent(*req) && !NotSent(*err) {
		return retry.Wait{}, false // it may have been processed: the caller gets this outcome
	}
	// A response asking for too long a wait goes to the caller.
	return advice.Retry(&p.Attempts, req, res, err, p.MaxRetryAfter, DefaultMaxRetryAfter, func() (time.Duration, bool) {
		if *err != nil {
			return 0, false // an error has no header
		}
		return RetryAfter(*res, time.Now())
	})
}

func (p *Policy) idempotent(req *http.Request) bool {
	if p.Idempotent == nil {
		return IsIdempotent(req)
	}
	return p.Idempotent(req)
}
