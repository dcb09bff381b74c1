package troupehttp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

func TestRetryAfterReadsSecondsAndDates(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	resp := func(kv ...string) *http.Response {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return &http.Response{Header: h}
	}
	for _, c := range []struct {
		name string
		res  *http.Response
		want time.Duration
		ok   bool
	}{
		{"none", resp(), 0, false},
		{"nil response", nil, 0, false},
		{"seconds", resp("Retry-After", "120"), 2 * time.Minute, true},
		{"zero", resp("Retry-After", " 0 "), 0, true},
		{"huge", resp("Retry-After", "99999999999999999999999"), time.Duration(1<<63 - 1), true},
		{"date against now", resp("Retry-After", now.Add(90*time.Second).Format(http.TimeFormat)), 90 * time.Second, true},
		{"date against the server's Date", resp(
			"Retry-After", now.Add(time.Hour+30*time.Second).Format(http.TimeFormat),
			"Date", now.Add(time.Hour).Format(http.TimeFormat)), 30 * time.Second, true},
		{"date in the past", resp("Retry-After", now.Add(-time.Minute).Format(http.TimeFormat)), 0, true},
		{"garbage", resp("Retry-After", "soon"), 0, false},
		{"number with junk", resp("Retry-After", "10s"), 0, false},
		{"negative", resp("Retry-After", "-5"), 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := troupehttp.RetryAfter(c.res, now)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.want, got)
		})
	}
}

// fakeTransport answers the n-th request (from 0) with statuses[n] (the
// last repeating) and headers[n] (none past its end), without a network, so
// that a test can run in a synctest bubble.
type fakeTransport struct {
	statuses []int
	headers  []http.Header
	n        atomic.Int64
}

func (f *fakeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	i := int(f.n.Add(1) - 1)
	h := http.Header{}
	if i < len(f.headers) && f.headers[i] != nil {
		h = f.headers[i].Clone()
	}
	code := f.statuses[min(i, len(f.statuses)-1)]
	return &http.Response{
		StatusCode: code, Status: http.StatusText(code), Header: h, Request: r,
		Body: io.NopCloser(strings.NewReader(http.StatusText(code))),
	}, nil
}

// A retried response's Retry-After lengthens the wait before the retry (the
// longer of it and the backoff wins); one asking for more than the policy's
// MaxRetryAfter is not retried: the caller gets it, readable.
// spec: RT1, RT6
func TestRetry_RetryAfterPacesTheRetry(t *testing.T) {
	after := func(v string) http.Header { return http.Header{"Retry-After": {v}} }
	for _, c := range []struct {
		name     string
		policy   func() troupehttp.Policy
		headers  []http.Header
		took     time.Duration
		status   int
		attempts int64
	}{
		{"header longer than backoff", func() troupehttp.Policy { return troupehttp.RetryPolicy(3, fixed(time.Second)) },
			[]http.Header{after("3")}, 3 * time.Second, 200, 2},
		{"backoff longer than header", func() troupehttp.Policy { return troupehttp.RetryPolicy(3, fixed(5*time.Second)) },
			[]http.Header{after("1")}, 5 * time.Second, 200, 2},
		{"too long: not retried", func() troupehttp.Policy { return troupehttp.RetryPolicy(3, nil) },
			[]http.Header{after("3600")}, 0, 503, 1},
		{"cap raised", func() troupehttp.Policy {
			p := troupehttp.RetryPolicy(3, nil)
			p.MaxRetryAfter = 2 * time.Hour
			return p
		}, []http.Header{after("3600")}, time.Hour, 200, 2},
		{"header ignored", func() troupehttp.Policy {
			p := troupehttp.RetryPolicy(3, nil)
			p.MaxRetryAfter = -1
			return p
		}, []http.Header{after("3600")}, 0, 200, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ft := &fakeTransport{statuses: []int{503, 200}, headers: c.headers}
				sys := troupetest.NewSystem(t)
				st, err := troupe.NewBuilder[req, res]().
					Layer(retry.Layer[req, res](c.policy())).
					Build(sys, troupehttp.Client(&http.Client{Transport: ft}))
				require.NoError(t, err)
				defer st.Close(context.Background())
				r, err := http.NewRequest(http.MethodGet, "http://example.test/", nil)
				require.NoError(t, err)
				start := time.Now()
				resp, err := troupe.Do(context.Background(), st, r)
				require.NoError(t, err)
				assert.Equal(t, c.took, time.Since(start))
				assert.Equal(t, c.status, resp.StatusCode)
				assert.Equal(t, http.StatusText(c.status), readBody(t, resp))
				assert.Equal(t, c.attempts, ft.n.Load())
			})
		})
	}
}

// fixed is a backoff of d before every retry.
type fixed time.Duration

func (f fixed) Delay(int) time.Duration { return time.Duration(f) }
