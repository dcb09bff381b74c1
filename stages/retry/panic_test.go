package retry_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupetest"
)

var err503 = errors.New("503")

// armedPolicy panics in one of its methods while armed is set: in Retry,
// in the copy made when its session starts (clone 1), or in the copy made
// for a retry (clone 2). It retries an error once, after 1 s ("slow": 10 s).
type armedPolicy struct {
	armed   *atomic.Bool
	in      string // "Retry", "clone 1" or "clone 2"
	clones  int
	retries int
}

func (p *armedPolicy) Retry(req *string, _ *string, err *error) (retry.Wait, bool) {
	if p.in == "Retry" && p.armed.Load() {
		panic("policy Retry blew up")
	}
	if *err == nil || p.retries > 0 {
		return retry.Wait{}, false
	}
	p.retries++
	if *req == "slow" {
		return retry.After(10 * time.Second), true
	}
	return retry.After(time.Second), true
}

func (p *armedPolicy) CloneRequest(req *string) (string, bool) {
	p.clones++
	if p.armed.Load() && p.in == fmt.Sprintf("clone %d", p.clones) {
		panic("policy CloneRequest blew up")
	}
	return *req, true
}

// armedDelay waits 10 s, or panics while armed.
type armedDelay struct{ armed *atomic.Bool }

func (d armedDelay) Delay(int) time.Duration {
	if d.armed.Load() {
		panic("backoff blew up")
	}
	return 10 * time.Second
}

// armedAttempts is retry.Attempts whose Retryable, Backoff or Copy panics
// while armed is set.
func armedAttempts(armed *atomic.Bool, in string) retry.Attempts[string, string] {
	a := retry.Attempts[string, string]{Max: 1, Backoff: armedDelay{armed}}
	if in != "Backoff" {
		a.Backoff = fixed(10 * time.Second)
	}
	switch in {
	case "Retryable":
		a.Retryable = func(_ string, err error) bool {
			if armed.Load() {
				panic("classifier blew up")
			}
			return err != nil
		}
	case "Copy":
		a.Copy = func(req string) (string, bool) {
			if armed.Load() {
				panic("copy blew up")
			}
			return req, true
		}
	case "Backoff":
		a.Backoff = armedDelay{armed}
	}
	return a
}

// doSafely is troupe.Do, except that a panic escaping it fails the test
// instead of crashing the run.
func doSafely(t *testing.T, svc troupe.Service[string, string], req string) (out string, err error) {
	defer func() {
		if v := recover(); v != nil {
			t.Errorf("a panic escaped troupe.Do: %v", v)
			err = fmt.Errorf("escaped: %v", v)
		}
	}()
	return troupe.Do(context.Background(), svc, req)
}

// spec: HR1, CORE6, ACT5
func TestHR1_PanickingPolicyFunctionIsAnOutcome(t *testing.T) {
	for _, c := range []struct {
		name, where string
		spawn       func(troupe.Host, troupe.Service[string, string], *atomic.Bool) (*retry.Retry[string, string], error)
	}{
		{"Retry", "retry: Policy.Retry", func(h troupe.Host, in troupe.Service[string, string], armed *atomic.Bool) (*retry.Retry[string, string], error) {
			return retry.New(h, in, armedPolicy{armed: armed, in: "Retry"})
		}},
		{"FirstCopy", "retry: Policy.CloneRequest", func(h troupe.Host, in troupe.Service[string, string], armed *atomic.Bool) (*retry.Retry[string, string], error) {
			return retry.New(h, in, armedPolicy{armed: armed, in: "clone 1"}) // the session's first copy
		}},
		{"RetryCopy", "retry: Policy.CloneRequest", func(h troupe.Host, in troupe.Service[string, string], armed *atomic.Bool) (*retry.Retry[string, string], error) {
			return retry.New(h, in, armedPolicy{armed: armed, in: "clone 2"}) // the copy for a retry
		}},
		{"Retryable", "retry: Attempts.Retryable", func(h troupe.Host, in troupe.Service[string, string], armed *atomic.Bool) (*retry.Retry[string, string], error) {
			return retry.New(h, in, armedAttempts(armed, "Retryable"))
		}},
		{"Backoff", "retry: Attempts.Backoff", func(h troupe.Host, in troupe.Service[string, string], armed *atomic.Bool) (*retry.Retry[string, string], error) {
			return retry.New(h, in, armedAttempts(armed, "Backoff"))
		}},
		{"Copy", "retry: Attempts.Copy", func(h troupe.Host, in troupe.Service[string, string], armed *atomic.Bool) (*retry.Retry[string, string], error) {
			return retry.New(h, in, armedAttempts(armed, "Copy"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := troupetest.NewSystem(t)
				leaf := actors.Func(func(_ context.Context, req string) (string, error) {
					if req == "ok" {
						return "ok", nil
					}
					return "", err503
				})
				lim, err := limit.New[string, string](sys, leaf, 2)
				require.NoError(t, err)
				var armed atomic.Bool
				r, err := c.spawn(sys, lim, &armed)
				require.NoError(t, err)

				// Another caller's session, waiting to retry while the panic happens.
				slow := make(chan error, 1)
				go func() { _, err := doSafely(t, r, "slow"); slow <- err }()
				synctest.Wait()
				require.Equal(t, 1, r.Sessions().Waiting)

				armed.Store(true)
				_, err = doSafely(t, r, "boom")
				armed.Store(false)
				require.ErrorIs(t, err, troupe.ErrPanic, "the panic is the caller's outcome")
				var pe *troupe.PanicError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, c.where, pe.Where, "the stage and the function that panicked")
				assert.NotEmpty(t, pe.Stack)

				out, err := doSafely(t, r, "ok")
				require.NoError(t, err, "the stage still serves")
				assert.Equal(t, "ok", out)

				err = <-slow
				assert.ErrorIs(t, err, err503, "the other session ends as it would have")
				assert.NotErrorIs(t, err, troupe.ErrPanic)

				synctest.Wait()
				assert.Equal(t, retry.Sessions{}, r.Sessions(), "the panicking session finished")
				assert.Equal(t, 0, r.Stats().Used, "its slot is free")
				assert.Equal(t, 2, lim.Available(), "and every unit of the inner service")
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				assert.NoError(t, r.Close(ctx), "Close returns")
				assert.NoError(t, lim.Close(ctx))
				assert.NoError(t, sys.Shutdown(ctx), "Shutdown returns")
			})
		})
	}
}

// Regression: a Retry whose inner service's readiness panicked while it
// started a session answered that request twice (once as the request in
// hand, once as a session of its Fail): the envelope went back to its pool
// while its caller still waited on it, which then waited until its own
// deadline. Now the caller gets the restart error at once, the stage
// serves the next request, and nothing is released twice.
//
// spec: HR1, HR3, CORE6
func TestHR3_RetryWhoseInnerReadinessPanicsAnswersTheSessionOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		mock, h := troupetest.NewMock[int, int]()
		r, err := retry.New(sys, mock, retry.Attempts[int, int]{Max: 2})
		require.NoError(t, err)
		h.PanicOnReady("readiness bug")
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		start := time.Now()
		_, err = troupe.Do(ctx, r, 1)
		require.ErrorIs(t, err, troupe.ErrRestarted, "the session ends with the restart")
		assert.ErrorIs(t, err, troupe.ErrPanic)
		assert.Zero(t, time.Since(start), "at once, not at the caller's deadline")

		h.Allow(1)
		got := troupetest.Go(context.Background(), r, 2)
		h.Next(context.Background()).Respond(20)
		assert.Equal(t, troupetest.Result[int]{Value: 20}, <-got, "the restarted stage serves")
		require.NoError(t, r.Close(context.Background()))
	})
}
