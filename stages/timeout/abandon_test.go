package timeout_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// stubborn is downstream work that ignores its context: each call takes d.
// It records when each call started and ended, from the bubble's start.
type stubborn struct {
	d     time.Duration
	start time.Time

	mu          sync.Mutex
	began, done []time.Duration
}

func newStubborn(d time.Duration) *stubborn { return &stubborn{d: d, start: time.Now()} }

func (s *stubborn) fn(_ context.Context, v int) (int, error) {
	s.mu.Lock()
	s.began = append(s.began, time.Since(s.start))
	s.mu.Unlock()
	time.Sleep(s.d) // ignores its context
	s.mu.Lock()
	s.done = append(s.done, time.Since(s.start))
	s.mu.Unlock()
	return v, nil
}

func (s *stubborn) times() (began, done []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.began...), append([]time.Duration(nil), s.done...)
}

// With Abandon, the caller has its timeout error at the deadline although
// the work ignores its context; the work goes on, and keeps its slot, in a
// limit outside the timeout or in the timeout's own capacity, until it
// really ends: a second caller gets in only then.
//
// spec: HR9
func TestHR9_AbandonAnswersAtTheDeadlineAndTheWorkKeepsItsSlot(t *testing.T) {
	for _, where := range []string{"limit outside", "own capacity"} {
		t.Run(where, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := troupetest.NewSystem(t)
				work := newStubborn(10 * time.Second)
				opts := []timeout.Option{timeout.Abandon()}
				if where == "own capacity" {
					opts = append(opts, timeout.Capacity(1))
				}
				to, err := timeout.New[int, int](sys, actors.Func(work.fn), time.Second, opts...)
				require.NoError(t, err)
				var svc troupe.Service[int, int] = to
				var lim *limit.Limit[int, int]
				if where == "limit outside" {
					lim, err = limit.New[int, int](sys, to, 1)
					require.NoError(t, err)
					svc = lim
				}
				ctx := context.Background()
				a := troupetest.GoTimed[int, int](ctx, svc, 1)
				synctest.Wait() // a's work runs
				b := troupetest.GoTimed[int, int](ctx, svc, 2)

				ra := <-a
				assert.ErrorIs(t, ra.Err, timeout.ErrTimeout)
				assert.Equal(t, time.Second+time.Nanosecond, ra.Took, "at the deadline, not when the work returns")
				assert.Equal(t, 1, to.Abandoned())
				assert.Equal(t, 0, to.InFlight())
				if lim != nil {
					assert.Equal(t, 0, lim.Available(), "the abandoned work keeps its permit")
				}
				time.Sleep(5 * time.Second)
				began, _ := work.times()
				assert.Equal(t, []time.Duration{0}, began, "b waits while a's work runs")

				rb := <-b // b gets in when a's work ends, and times out in turn
				assert.ErrorIs(t, rb.Err, timeout.ErrTimeout)
				assert.Equal(t, 11*time.Second+time.Nanosecond, rb.Took)
				began, done := work.times()
				assert.Equal(t, []time.Duration{0, 10 * time.Second}, began)
				assert.Equal(t, []time.Duration{10 * time.Second}, done)

				time.Sleep(10 * time.Second) // b's work ends
				synctest.Wait()
				assert.Equal(t, 0, to.Abandoned())
				if lim != nil {
					assert.Equal(t, 1, lim.Available())
				}
			})
		})
	}
}

// Without Abandon (the default) the work runs on the caller's goroutine: a
// caller whose work ignores its context has its timeout error only when the
// work returns.
//
// spec: HR9
func TestHR9_WithoutAbandonTheCallerWaitsForWorkThatIgnoresItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		work := newStubborn(10 * time.Second)
		to, err := timeout.New[int, int](troupetest.NewSystem(t), actors.Func(work.fn), time.Second)
		require.NoError(t, err)
		r := <-troupetest.GoTimed[int, int](context.Background(), to, 1)
		assert.ErrorIs(t, r.Err, timeout.ErrTimeout, "the deadline passed: the late value is discarded")
		assert.Equal(t, 10*time.Second, r.Took, "the caller ran the work to its end")
		assert.Equal(t, 0, to.Abandoned())
	})
}

// Abandon changes nothing for work that answers in time: the caller has
// the response, and the limit's permit is free when the caller has it.
//
// spec: HR9, C2, T2
func TestHR9_AbandonAnswersInTimeAsBefore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		for _, takes := range []time.Duration{500 * time.Millisecond, time.Second} { // at the deadline itself, the response wins
			work := newStubborn(takes)
			to, err := timeout.New[int, int](sys, actors.Func(work.fn), time.Second, timeout.Abandon())
			require.NoError(t, err)
			lim, err := limit.New[int, int](sys, to, 1)
			require.NoError(t, err)
			r := <-troupetest.GoTimed[int, int](context.Background(), lim, 7)
			assert.Equal(t, troupetest.Timed[int]{Value: 7, Took: takes}, r)
			assert.Equal(t, 1, lim.Available(), "the permit was free before the caller had its response")
			assert.Equal(t, 0, to.Abandoned())
		}
	})
}

// A Retry outside the timeout re-reserves the limit between them for each
// attempt: the next attempt waits until the abandoned one's work has really
// ended.
//
// spec: HR9, T4
func TestHR9_RetryAfterAnAbandonedAttemptWaitsForItsWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		work := newStubborn(10 * time.Second)
		to, err := timeout.New[int, int](sys, actors.Func(work.fn), time.Second, timeout.Abandon())
		require.NoError(t, err)
		lim, err := limit.New[int, int](sys, to, 1)
		require.NoError(t, err)
		r, err := retry.New(sys, lim, retry.Attempts[int, int]{Max: 1})
		require.NoError(t, err)
		res := <-troupetest.GoTimed[int, int](context.Background(), r, 1)
		assert.ErrorIs(t, res.Err, retry.ErrExhausted)
		assert.ErrorIs(t, res.Err, timeout.ErrTimeout)
		assert.Equal(t, 11*time.Second+time.Nanosecond, res.Took)
		began, _ := work.times()
		assert.Equal(t, []time.Duration{0, 10 * time.Second}, began, "the second attempt started when the first one's work ended")
		time.Sleep(10 * time.Second)
	})
}

// A Retry inside the timeout sends its attempts on the same terms: the
// caller has its answer at the deadline, the attempt's work goes on alone,
// and the session ends when it returns.
//
// spec: HR9, T4
func TestHR9_AbandonCoversTheAttemptsOfARetryInside(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		work := newStubborn(10 * time.Second)
		r, err := retry.New(sys, actors.Func(work.fn), retry.Attempts[int, int]{Max: 3})
		require.NoError(t, err)
		to, err := timeout.New[int, int](sys, r, time.Second, timeout.Abandon())
		require.NoError(t, err)
		res := <-troupetest.GoTimed[int, int](context.Background(), to, 1)
		assert.ErrorIs(t, res.Err, timeout.ErrTimeout)
		assert.Equal(t, time.Second+time.Nanosecond, res.Took)
		assert.Equal(t, 1, to.Abandoned())
		time.Sleep(9 * time.Second)
		synctest.Wait()
		assert.Equal(t, 0, to.Abandoned())
		assert.Equal(t, retry.Sessions{}, r.Sessions(), "the session ended with the attempt's work")
		began, _ := work.times()
		assert.Equal(t, []time.Duration{0}, began, "no attempt after the caller had its answer")
	})
}

// Close drains abandoned work as it drains calls in flight: it returns when
// the work ends, or with its context's error when that comes first.
//
// spec: HR9, HR2
func TestHR9_CloseWaitsForAbandonedWork(t *testing.T) {
	for _, wait := range []time.Duration{time.Minute, 3 * time.Second} {
		synctest.Test(t, func(t *testing.T) {
			work := newStubborn(10 * time.Second)
			to, err := timeout.New[int, int](troupetest.NewSystem(t), actors.Func(work.fn), time.Second, timeout.Abandon())
			require.NoError(t, err)
			r := <-troupetest.GoTimed[int, int](context.Background(), to, 1)
			require.ErrorIs(t, r.Err, timeout.ErrTimeout)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			start := time.Now()
			err = to.Close(ctx)
			if wait > 10*time.Second {
				assert.NoError(t, err)
				assert.Equal(t, 10*time.Second, time.Since(work.start), "until the work ended")
			} else {
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Equal(t, wait, time.Since(start))
				assert.Equal(t, 1, to.Abandoned(), "still running")
				time.Sleep(10 * time.Second)
			}
		})
	}
}

// A panic in abandoned work is caught like any other: its outcome is
// discarded with the rest, and the process survives.
//
// spec: HR9, HR1
func TestHR9_AbandonedWorkThatPanicsIsCaught(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := actors.Func(func(_ context.Context, _ int) (int, error) {
			time.Sleep(10 * time.Second)
			panic("late and broken")
		})
		to, err := timeout.New[int, int](troupetest.NewSystem(t), f, time.Second, timeout.Abandon())
		require.NoError(t, err)
		r := <-troupetest.GoTimed[int, int](context.Background(), to, 1)
		assert.ErrorIs(t, r.Err, timeout.ErrTimeout)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.Equal(t, 0, to.Abandoned())
	})
}
