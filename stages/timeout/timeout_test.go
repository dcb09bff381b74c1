package timeout_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

func overMock(t *testing.T, d time.Duration, opts ...timeout.Option) (*timeout.Timeout[int, int], *troupetest.Handle[int, int]) {
	mock, h := troupetest.NewMock[int, int]()
	to, err := timeout.New[int, int](troupetest.NewSystem(t), mock, d, opts...)
	require.NoError(t, err)
	return to, h
}

// spec: T1
func TestT1_DeadlineStartsAtTheCallNotTheReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		to, h := overMock(t, time.Second, timeout.Capacity(1))
		ctx := context.Background()
		h.Allow(10)
		p, err := to.Reserve(ctx)
		require.NoError(t, err)

		// A second caller waits 5 s for the only slot, then calls; its
		// downstream takes 900 ms: within the timeout, since reserving does
		// not count.
		done := make(chan troupetest.Timed[int], 1)
		go func() {
			q, err := to.Reserve(ctx)
			if err != nil {
				done <- troupetest.Timed[int]{Err: err}
				return
			}
			start := time.Now()
			v, err := q.Call(ctx, 2)
			done <- troupetest.Timed[int]{Value: v, Err: err, Took: time.Since(start)}
		}()
		time.Sleep(5 * time.Second)
		require.NoError(t, p.Release())
		req := h.Next(ctx)
		time.Sleep(900 * time.Millisecond)
		req.Respond(20)
		assert.Equal(t, troupetest.Timed[int]{Value: 20, Took: 900 * time.Millisecond}, <-done)

		// The stage's own wait for its inner service happens after the call
		// was made: it counts.
		h2mock, h2 := troupetest.NewMock[int, int]()
		to2, err := timeout.New[int, int](troupetest.NewSystem(t), h2mock, time.Second)
		require.NoError(t, err)
		r := <-troupetest.GoTimed[int, int](ctx, to2, 3)
		assert.ErrorIs(t, r.Err, timeout.ErrTimeout)
		assert.Equal(t, time.Second+time.Nanosecond, r.Took)
		assert.Zero(t, h2.Calls())
	})
}

// spec: T2
func TestT2_ResponseAndDeadlineBothReadyResponseWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		for _, tc := range []struct {
			takes time.Duration
			win   bool
		}{
			{time.Second, true},                      // ready at the deadline itself
			{time.Second + 2*time.Nanosecond, false}, // after the expiry check
		} {
			f := actors.Func(func(ctx context.Context, v int) (int, error) {
				time.Sleep(tc.takes) // ignores ctx: both are ready at once
				return v, nil
			})
			to, err := timeout.New[int, int](sys, f, time.Second)
			require.NoError(t, err)
			for range 20 {
				r := <-troupetest.GoTimed[int, int](context.Background(), to, 7)
				if tc.win {
					assert.Equal(t, troupetest.Timed[int]{Value: 7, Took: time.Second}, r)
				} else {
					assert.ErrorIs(t, r.Err, timeout.ErrTimeout)
				}
			}
			assert.Equal(t, 0, to.InFlight())
		}
	})
}

// spec: T3
func TestT3_ExpiryCancelsTheWorkFreesTheTimerDiscardsLateResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		to, h := overMock(t, 2*time.Second)
		ctx := context.Background()
		h.Allow(1)
		c := troupetest.GoTimed[int, int](ctx, to, 1)
		req := h.Next(ctx)
		dl, ok := req.Ctx.Deadline()
		require.True(t, ok)
		assert.Equal(t, time.Now().Add(2*time.Second), dl, "the work sees the deadline")
		assert.Equal(t, 1, to.InFlight())

		r := <-c
		assert.Equal(t, 2*time.Second+time.Nanosecond, r.Took)
		assert.ErrorIs(t, r.Err, timeout.ErrTimeout)
		assert.ErrorIs(t, r.Err, context.DeadlineExceeded)
		var te *timeout.Error
		require.ErrorAs(t, r.Err, &te)
		assert.Equal(t, 2*time.Second, te.After)
		assert.Equal(t, "timeout: request timed out after 2s", r.Err.Error())

		assert.ErrorIs(t, req.Ctx.Err(), context.DeadlineExceeded, "the inner work's context is cancelled")
		select {
		case <-req.Ctx.Done():
		default:
			t.Fatal("Done not closed")
		}
		assert.Equal(t, 0, to.InFlight(), "the call left the deadline set")

		req.Respond(99) // late: discarded, not delivered, not leaked
		synctest.Wait()
		h.Allow(1)
		c = troupetest.GoTimed[int, int](ctx, to, 2)
		req = h.Next(ctx)
		req.Respond(22)
		assert.Equal(t, 22, (<-c).Value, "the stage goes on")
	})
}

// spec: T3
func TestT3_InnerGivingUpAtTheDeadlineIsATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := actors.Func(func(ctx context.Context, _ int) (int, error) {
			dl, _ := ctx.Deadline()
			time.Sleep(time.Until(dl)) // an HTTP client would stop at the deadline on its own
			return 0, fmt.Errorf("dial: %w", context.DeadlineExceeded)
		})
		to, err := timeout.New[int, int](troupetest.NewSystem(t), f, time.Second)
		require.NoError(t, err)
		r := <-troupetest.GoTimed[int, int](context.Background(), to, 1)
		assert.ErrorIs(t, r.Err, timeout.ErrTimeout, "named as a timeout, whoever noticed first")
	})
}

// spec: T5
func TestT5_TimeoutOutsideBufferCountsQueueing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		mock, h := troupetest.NewMock[int, int]()
		st, err := troupe.NewBuilder[int, int]().
			Layer(timeout.Layer[int, int](time.Second)).
			Layer(buffer.Layer[int, int](4)).
			Build(sys, mock)
		require.NoError(t, err)
		ctx := context.Background()
		a, b := troupetest.GoTimed[int, int](ctx, st, 1), troupetest.GoTimed[int, int](ctx, st, 2)
		synctest.Wait()
		for _, c := range []<-chan troupetest.Timed[int]{a, b} {
			r := <-c
			assert.ErrorIs(t, r.Err, timeout.ErrTimeout, "queued in the buffer, never reached the inner service")
			assert.Equal(t, time.Second+time.Nanosecond, r.Took)
		}
		assert.Zero(t, h.Calls())
	})
}

// spec: T5
func TestT5_TimeoutInsideBufferDoesNotCountQueueing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		mock, h := troupetest.NewMock[int, int]()
		st, err := troupe.NewBuilder[int, int]().
			Layer(buffer.Layer[int, int](4)).
			Layer(timeout.Layer[int, int](time.Second, timeout.Capacity(1))).
			Build(sys, mock)
		require.NoError(t, err)
		ctx := context.Background()
		a := troupetest.GoTimed[int, int](ctx, st, 1) // parks in the timeout stage, filling it: its clock runs
		synctest.Wait()
		b := troupetest.GoTimed[int, int](ctx, st, 2) // the timeout stage is full: b waits in the buffer
		synctest.Wait()
		time.Sleep(900 * time.Millisecond)
		h.Allow(1) // a goes on; b enters the timeout stage now, at 0.9 s
		reqA := h.Next(ctx)
		time.Sleep(50 * time.Millisecond)
		reqA.Respond(10)
		assert.Equal(t, 10, (<-a).Value)
		time.Sleep(550 * time.Millisecond)
		h.Allow(1)
		reqB := h.Next(ctx)
		time.Sleep(300 * time.Millisecond)
		reqB.Respond(20) // 1.8 s after b's call, 0.9 s after the timeout stage's
		r := <-b
		assert.NoError(t, r.Err, "the time queued in the buffer is not counted")
		assert.Equal(t, 20, r.Value)
		assert.Equal(t, 1800*time.Millisecond, r.Took)
	})
}

func TestCallContextFollowsItsParent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type key struct{}
		to, h := overMock(t, time.Hour)
		h.Allow(1)
		parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
		c := troupetest.GoTimed[int, int](parent, to, 1)
		req := h.Next(context.Background())
		assert.Equal(t, "v", req.Ctx.Value(key{}), "values pass through")
		done := req.Ctx.Done()
		cancel()
		<-done
		assert.ErrorIs(t, req.Ctx.Err(), context.Canceled)
		assert.ErrorIs(t, (<-c).Err, context.Canceled)
		synctest.Wait()
		assert.Equal(t, 0, to.InFlight())

		short, cancel2 := context.WithTimeout(context.Background(), time.Minute)
		defer cancel2()
		h.Allow(1)
		c = troupetest.GoTimed[int, int](short, to, 2)
		req = h.Next(context.Background())
		dl, _ := req.Ctx.Deadline()
		assert.Equal(t, time.Now().Add(time.Minute), dl, "the earlier of the two deadlines")
		req.Respond(2)
		<-c
	})
}

func TestCloseWaitsForCallsInFlightThenFailsThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		to, h := overMock(t, time.Hour)
		ctx := context.Background()
		h.Allow(2)
		a := troupetest.GoTimed[int, int](ctx, to, 1)
		reqA := h.Next(ctx)
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		err := to.Close(cctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "the call in flight did not finish in time")
		r := <-a
		assert.ErrorIs(t, r.Err, troupe.ErrClosed)
		assert.ErrorIs(t, reqA.Ctx.Err(), context.Canceled, "its work was told to stop")
		assert.Equal(t, 0, to.InFlight())
	})
}

func TestBadDurationIsAnError(t *testing.T) {
	f := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	_, err := timeout.New[int, int](nil, f, 0)
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
	assert.ErrorContains(t, err, "greater than zero")
}

func ExampleNew() {
	sys := actors.NewSystem()
	defer sys.Shutdown(context.Background())
	slow := actors.Func(func(ctx context.Context, v int) (int, error) {
		select {
		case <-time.After(time.Minute):
			return v, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	})
	to, _ := timeout.New[int, int](sys, slow, 10*time.Millisecond)
	_, err := troupe.Do[int, int](context.Background(), to, 1)
	fmt.Println(errors.Is(err, timeout.ErrTimeout), err)
	// Output: true timeout: request timed out after 10ms
}

// Regression: a closing timeout stage whose last call finished on the
// caller's goroutine was not told: Close waited for its context instead of
// returning when the call did.
//
// spec: ACT5
func TestCloseReturnsWhenTheLastCallInFlightFinishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		to, h := overMock(t, time.Hour)
		ctx := context.Background()
		h.Allow(1)
		a := troupetest.GoTimed[int, int](ctx, to, 1)
		req := h.Next(ctx)
		closed := make(chan error, 1)
		start := time.Now()
		go func() {
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			closed <- to.Close(cctx)
		}()
		time.Sleep(300 * time.Millisecond)
		req.Respond(10)
		assert.Equal(t, 10, (<-a).Value)
		assert.NoError(t, <-closed, "drained")
		assert.Equal(t, 300*time.Millisecond, time.Since(start), "as soon as the call finished, not at Close's deadline")
	})
}

// Calls made one after another expire one after another, each at its own
// deadline; a call answered in the middle leaves the deadline set at once
// and is not expired later.
// spec: T2, T3
func TestT3_CallsExpireInTurnAndAnsweredOnesLeaveTheSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		to, h := overMock(t, 5*time.Second)
		ctx := context.Background()
		h.Allow(3)
		var calls []<-chan troupetest.Timed[int]
		var reqs []*troupetest.Request[int, int]
		for i := range 3 {
			calls = append(calls, troupetest.GoTimed[int, int](ctx, to, i))
			reqs = append(reqs, h.Next(ctx))
			time.Sleep(time.Second)
		}
		assert.Equal(t, 3, to.InFlight())
		reqs[1].Respond(10)
		assert.Equal(t, troupetest.Timed[int]{Value: 10, Took: 2 * time.Second}, <-calls[1])
		assert.Equal(t, 2, to.InFlight(), "the answered call left the set")

		first, last := <-calls[0], <-calls[2]
		assert.ErrorIs(t, first.Err, timeout.ErrTimeout)
		assert.ErrorIs(t, last.Err, timeout.ErrTimeout)
		assert.Equal(t, 5*time.Second+time.Nanosecond, first.Took)
		assert.Equal(t, 5*time.Second+time.Nanosecond, last.Took)
		assert.Equal(t, 0, to.InFlight())
	})
}
