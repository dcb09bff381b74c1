package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// oneRetry is the seed's OneRetry: retry one error, after a gate.
type oneRetry struct {
	left int
	gate chan struct{}
}

func (o *oneRetry) Retry(_ *string, res *string, err *error) (retry.Wait, bool) {
	if *err == nil || o.left == 0 {
		return retry.Wait{}, false
	}
	o.left--
	return retry.Until(o.gate), true
}

func (o *oneRetry) CloneRequest(req *string) (string, bool) { return *req, true }

// permits replays the seed's run(): it reports the limit's available
// permits at the four points of the trace.
func permits(t *testing.T, svc troupe.Service[string, string], l *limit.Limit[string, string], h *troupetest.Handle[string, string], gate chan struct{}) []int {
	ctx := context.Background()
	var got []int
	fut := troupetest.Go(ctx, svc, "hi")
	req := h.Next(ctx)
	got = append(got, l.Available()) // first attempt in flight
	req.Fail(errors.New("boom"))
	synctest.Wait()
	got = append(got, l.Available()) // waiting to retry
	gate <- struct{}{}
	req = h.Next(ctx)
	got = append(got, l.Available()) // retry in flight
	req.Respond("ok")
	r := <-fut
	require.NoError(t, r.Err)
	assert.Equal(t, "ok", r.Value)
	synctest.Wait()
	got = append(got, l.Available()) // outcome delivered
	return got
}

// spec: C4, RT7
func TestC4_RetryOutsideLimitTakesAPermitPerAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		gate := make(chan struct{})
		mock, h := troupetest.NewMock[string, string]()
		h.Allow(10)
		l, err := limit.New[string, string](sys, mock, 1)
		require.NoError(t, err)
		svc, err := retry.New(sys, l, oneRetry{left: 1, gate: gate})
		require.NoError(t, err)
		assert.Equal(t, []int{0, 1, 0, 1}, permits(t, svc, l, h, gate), "the permit is free during the wait")
		assert.EqualValues(t, 2, h.Calls(), "the limit saw each attempt as a call")
	})
}

// spec: C4, RT7
func TestC4_LimitOutsideRetryHoldsOnePermitForTheSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		gate := make(chan struct{})
		mock, h := troupetest.NewMock[string, string]()
		h.Allow(10)
		r, err := retry.New(sys, mock, oneRetry{left: 1, gate: gate})
		require.NoError(t, err)
		l, err := limit.New[string, string](sys, r, 1)
		require.NoError(t, err)
		assert.Equal(t, []int{0, 0, 0, 1}, permits(t, l, l, h, gate), "one permit for the whole session, wait included")
	})
}

// alwaysFail retries every error after a fixed delay, forever.
type alwaysFail struct {
	delay time.Duration
	seen  *[]error
}

func (a *alwaysFail) Retry(_ *string, _ *string, err *error) (retry.Wait, bool) {
	if a.seen != nil {
		*a.seen = append(*a.seen, *err)
	}
	return retry.After(a.delay), *err != nil
}

func (a *alwaysFail) CloneRequest(req *string) (string, bool) { return *req, true }

// spec: T4
func TestT4_TimeoutOutsideRetryBoundsTheWholeSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		mock, h := troupetest.NewMock[string, string]()
		h.Allow(100)
		r, err := retry.New(sys, mock, alwaysFail{delay: 600 * time.Millisecond})
		require.NoError(t, err)
		to, err := timeout.New[string, string](sys, r, time.Second)
		require.NoError(t, err)
		ctx := context.Background()
		start := time.Now()
		fut := troupetest.Go(ctx, to, "x")
		for range 2 { // attempts at 0 s and 0.6 s; the second wait ends after the deadline
			h.Next(ctx).Fail(errors.New("boom"))
		}
		res := <-fut
		assert.ErrorIs(t, res.Err, timeout.ErrTimeout)
		assert.Equal(t, time.Second+time.Nanosecond, time.Since(start), "the deadline fell during a backoff wait")
		synctest.Wait()
		assert.Equal(t, 0, r.Sessions().Sessions, "the session ended with its deadline, not after its wait")
		assert.EqualValues(t, 2, h.Calls())
	})
}

// spec: T4
func TestT4_TimeoutInsideRetryTimesEachAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		mock, h := troupetest.NewMock[string, string]()
		h.Allow(100)
		to, err := timeout.New[string, string](sys, mock, time.Second)
		require.NoError(t, err)
		var seen []error
		r, err := retry.New(sys, to, retry.Attempts[string, string]{
			Max:       2,
			Retryable: func(_ string, err error) bool { seen = append(seen, err); return errors.Is(err, timeout.ErrTimeout) },
		})
		require.NoError(t, err)
		ctx := context.Background()
		start := time.Now()
		fut := troupetest.Go(ctx, r, "x")
		first := h.Next(ctx) // never answered: times out at 1 s
		second := h.Next(ctx)
		assert.Equal(t, time.Second+time.Nanosecond, time.Since(start), "the retry came after the first attempt's own deadline")
		time.Sleep(500 * time.Millisecond)
		second.Respond("late but fine")
		res := <-fut
		require.NoError(t, res.Err, "1.5 s end to end: each attempt had its own second")
		assert.Equal(t, "late but fine", res.Value)
		require.Len(t, seen, 2)
		assert.ErrorIs(t, seen[0], timeout.ErrTimeout, "the policy judged the timeout error")
		assert.ErrorIs(t, first.Ctx.Err(), context.DeadlineExceeded)
	})
}

// once refuses to copy its request.
type once struct{ asked *int }

func (o *once) Retry(*string, *string, *error) (retry.Wait, bool) {
	*o.asked++
	return retry.Wait{}, true
}
func (o *once) CloneRequest(*string) (string, bool) { return "", false }

// spec: RT3
func TestRT3_RefusedCopyIsSentOnceAndNotJudged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[string, string]()
		h.Allow(10)
		asked := 0
		r, err := retry.New(troupetest.NewSystem(t), mock, once{asked: &asked})
		require.NoError(t, err)
		fut := troupetest.Go(context.Background(), r, "stream")
		h.Next(context.Background()).Fail(errors.New("failed 1"))
		assert.EqualError(t, (<-fut).Err, "failed 1", "the outcome as is")
		assert.Zero(t, asked, "Retry was never asked")
		assert.EqualValues(t, 1, h.Calls())
	})
}

// spec: RT2
func TestRT2_AttemptsTurnsTheLastErrorIntoExhausted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[string, string]()
		h.Allow(10)
		r, err := retry.New(troupetest.NewSystem(t), mock, retry.Attempts[string, string]{Max: 2})
		require.NoError(t, err)
		fut := troupetest.Go(context.Background(), r, "x")
		cause := errors.New("503")
		for range 3 {
			h.Next(context.Background()).Fail(cause)
		}
		res := <-fut
		assert.ErrorIs(t, res.Err, retry.ErrExhausted)
		assert.ErrorIs(t, res.Err, cause)
		var ex *retry.ExhaustedError
		require.ErrorAs(t, res.Err, &ex)
		assert.Equal(t, 3, ex.Attempts)
	})
}

// spec: RT10
func TestRT10_WaitEndsWhenTheCallerGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[string, string]()
		h.Allow(10)
		r, err := retry.New(troupetest.NewSystem(t), mock, alwaysFail{delay: time.Hour})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		fut := troupetest.Go(ctx, r, "x")
		h.Next(ctx).Fail(errors.New("boom"))
		synctest.Wait()
		assert.Equal(t, 1, r.Sessions().Waiting)
		start := time.Now()
		cancel()
		assert.ErrorIs(t, (<-fut).Err, context.Canceled)
		synctest.Wait()
		assert.Equal(t, retry.Sessions{}, r.Sessions(), "the session ended at once, not after its hour")
		assert.Zero(t, time.Since(start))
		assert.Equal(t, 0, r.Stats().Used)
	})
}
