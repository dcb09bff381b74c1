package troupehttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// A breaker over the Send leaf with IsFailure trips on a backend's 503s
// (without it, a 503 is a response like any other and the breaker never
// opens); callers that give up by themselves are not counted.
//
// spec: HT7
func TestABreakerWithIsFailureTripsOnServerErrorsNotOnCancellations(t *testing.T) {
	be := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-r.Context().Done()
			return
		}
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	build := func(opts ...breaker.Option[res]) (*troupe.Stack[req, res], func() breaker.State) {
		sys := troupetest.NewSystem(t)
		var br *breaker.Breaker[req, res]
		st, err := stages.Stack[req, res]().Layer(troupe.LayerFunc[req, res](func(h troupe.Host, in troupe.Service[req, res]) (troupe.Service[req, res], error) {
			b, err := breaker.New(h, in, append([]breaker.Option[res]{breaker.CountWindow(4), breaker.OpenDelay(time.Minute)}, opts...)...)
			br = b
			return b, err
		})).Build(sys, troupehttp.Send(newBackendTransport(t)))
		require.NoError(t, err)
		closeStack(t, st)
		return st, br.State
	}
	call := func(st *troupe.Stack[req, res], ctx context.Context, path string) error {
		r, _ := http.NewRequestWithContext(ctx, http.MethodGet, be.URL+path, nil)
		resp, err := troupe.Do(ctx, st, r)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return err
	}

	st, state := build(breaker.Classify(troupehttp.IsFailure))
	for range 10 { // callers that give up are not failures
		ctx, cancel := context.WithTimeout(testCtx(t), 5*time.Millisecond)
		assert.Error(t, call(st, ctx, "/slow"))
		cancel()
	}
	assert.Equal(t, breaker.Closed, state())
	for range 4 {
		require.NoError(t, call(st, testCtx(t), "/"))
	}
	assert.Equal(t, breaker.Open, state(), "four 503s in a window of four")
	assert.ErrorIs(t, call(st, testCtx(t), "/"), breaker.ErrOpen)

	st, state = build()
	for range 8 {
		require.NoError(t, call(st, testCtx(t), "/"))
	}
	assert.Equal(t, breaker.Closed, state(), "without IsFailure a 503 is a success")
}

// IsFailure's table.
//
// spec: HT7
func TestIsFailureCountsServerErrorsAndTransportErrors(t *testing.T) {
	for _, c := range []struct {
		res     *http.Response
		err     error
		failure bool
	}{
		{&http.Response{StatusCode: 200}, nil, false},
		{&http.Response{StatusCode: 404}, nil, false},
		{&http.Response{StatusCode: 429}, nil, false},
		{&http.Response{StatusCode: 500}, nil, true},
		{&http.Response{StatusCode: 503}, nil, true},
		{&http.Response{StatusCode: 599}, nil, true},
		{nil, errors.New("connection reset"), true},
		{nil, context.DeadlineExceeded, true},
		{nil, context.Canceled, false},
		{nil, fmt.Errorf("get: %w", context.Canceled), false},
	} {
		assert.Equal(t, c.failure, troupehttp.IsFailure(c.res, c.err), "%v %v", c.res, c.err)
	}
}
