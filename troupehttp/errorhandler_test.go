package troupehttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupehttp"
)

// status gets path through g and returns the status and Retry-After the
// client saw.
func status(t *testing.T, g *gateway, path string) (int, string) {
	t.Helper()
	resp, err := newUser(t).Get(g.URL + path)
	require.NoError(t, err)
	readBody(t, resp)
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// ReverseProxy with ErrorHandler answers troupe's errors with the status
// a client expects: a timeout 504, a shed request 503 with Retry-After, an
// open breaker 503 with the Retry-After of its open delay, a refused rate
// 429 with its Retry-After, retries spent 502.
//
// spec: HT6
func TestTheErrorHandlerAnswersEachRefusalWithItsStatus(t *testing.T) {
	be := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			<-r.Context().Done()
		case "/500":
			http.Error(w, "broken", http.StatusInternalServerError)
		case "/reset":
			resetting(w, r)
		}
	})

	t.Run("a timeout is a 504", func(t *testing.T) {
		g := newGateway(t, be.URL, stages.Stack[req, res]().Timeout(50*time.Millisecond))
		code, after := status(t, g, "/slow")
		assert.Equal(t, http.StatusGatewayTimeout, code)
		assert.Empty(t, after)
	})
	t.Run("a shed request is a 503 with Retry-After", func(t *testing.T) {
		s := newStreaming(t) // its response holds the limit while it streams, and one waits in the shedder's slot
		defer s.releaseAll() // before the gateway closes: it waits for its handlers
		g := newGateway(t, s.URL, stages.Stack[req, res]().LoadShed(loadshed.Capacity(1)).Limit(1), troupehttp.HoldUntilBodyClosed())
		send := func() {
			go func() {
				if resp, err := newUser(t).Get(g.URL); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
		}
		send()
		eventually(t, testCtx(t), "one at the backend", func() bool { active, _ := s.counts(); return active == 1 })
		send()
		eventually(t, testCtx(t), "one waiting in the shedder", func() bool { return used(t, g.stack, "loadshed") == 1 })
		code, after := status(t, g, "/")
		assert.Equal(t, http.StatusServiceUnavailable, code)
		assert.Equal(t, "1", after)
	})
	t.Run("an open breaker is a 503 with the Retry-After of its delay", func(t *testing.T) {
		g := newGateway(t, be.URL, stages.Stack[req, res]().
			Breaker(breaker.MinCalls(1), breaker.CountWindow(1), breaker.OpenDelay(30*time.Second),
				breaker.Classify(troupehttp.IsFailure)))
		code, _ := status(t, g, "/500")
		assert.Equal(t, http.StatusInternalServerError, code, "the backend's own 500 passes")
		code, after := status(t, g, "/500")
		assert.Equal(t, http.StatusServiceUnavailable, code)
		n, err := strconv.Atoi(after)
		require.NoError(t, err)
		assert.InDelta(t, 30, n, 1)
	})
	t.Run("a refused rate is a 429 with Retry-After", func(t *testing.T) {
		g := newGateway(t, be.URL, stages.Stack[req, res]().Filter(func(r req) (req, error) {
			return nil, troupehttp.RateLimited(1500*time.Millisecond, errors.New("client quota spent"))
		}))
		code, after := status(t, g, "/")
		assert.Equal(t, http.StatusTooManyRequests, code)
		assert.Equal(t, "2", after, "rounded up")
	})
	t.Run("retries spent are a 502", func(t *testing.T) {
		g := newGateway(t, be.URL, stages.Stack[req, res]().Layer(troupehttp.Retry(2, nil)))
		code, after := status(t, g, "/reset")
		assert.Equal(t, http.StatusBadGateway, code)
		assert.Empty(t, after)
	})
}

// StatusOf's whole table, and a client that went away.
//
// spec: HT6
func TestStatusOfNamesAStatusForEveryError(t *testing.T) {
	open := &breaker.OpenError{State: breaker.Open, RetryAt: time.Now().Add(10 * time.Second)}
	for _, c := range []struct {
		err   error
		code  int
		after time.Duration
	}{
		{&retry.ExhaustedError{Attempts: 3, Err: &timeout.Error{After: time.Second}}, 502, 0},
		{&timeout.Error{After: time.Second}, 504, 0},
		{fmt.Errorf("dial: %w", context.DeadlineExceeded), 504, 0},
		{&breaker.OpenError{State: breaker.HalfOpen}, 503, troupehttp.DefaultRetryAfter},
		{loadshed.ErrOverloaded, 503, troupehttp.DefaultRetryAfter},
		{&troupe.ClosedError{Service: "limit"}, 503, troupehttp.DefaultRetryAfter},
		{troupehttp.RateLimited(0, nil), 429, troupehttp.DefaultRetryAfter},
		{context.Canceled, troupehttp.StatusClientClosedRequest, 0},
		{&troupe.PanicError{Where: "leaf", Value: "bug"}, 500, 0},
		{troupe.Permanent(errors.New("x509: unknown authority")), 502, 0},
		{io.ErrUnexpectedEOF, 502, 0},
	} {
		code, after := troupehttp.StatusOf(c.err)
		assert.Equal(t, c.code, code, "%v", c.err)
		assert.Equal(t, c.after, after, "%v", c.err)
	}
	code, after := troupehttp.StatusOf(open)
	assert.Equal(t, 503, code)
	assert.InDelta(t, 10*time.Second, after, float64(time.Second))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	troupehttp.ErrorHandler(w, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx), loadshed.ErrOverloaded)
	assert.Equal(t, troupehttp.StatusClientClosedRequest, w.Code)
	assert.Empty(t, w.Header().Get("Retry-After"))
}
