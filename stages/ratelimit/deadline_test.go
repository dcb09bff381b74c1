package ratelimit_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// callBy calls s with a context whose deadline is d from now, once the
// calls started before it wait in the stage.
func callBy(s troupe.Service[int, int], v int, d time.Duration) <-chan troupetest.Result[int] {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	ch := make(chan troupetest.Result[int], 1)
	go func() {
		defer cancel()
		ch <- <-troupetest.Go(ctx, s, v)
	}()
	synctest.Wait()
	return ch
}

// A caller whose deadline ends before its turn could come is refused at
// once, with an error matching ErrLimited, troupe.ErrFull and
// context.DeadlineExceeded; its turn is the unit after those queued or
// waiting ahead of it, and one refused takes no turn (x/time/rate's
// TestWaitTimeout: 10 a second, a burst of 3, a Wait whose units would
// come after its context's deadline returns an error at once).
//
// spec: PP2
func TestACallerWhoseDeadlineEndsBeforeItsTurnIsRefusedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), perSecond(10), ratelimit.Smooth(3))
		ctx := context.Background()
		allOK(t, startInOrder(ctx, rl, 0, 1, 2)) // the burst; the next unit at 100 ms
		early := callBy(rl, 3, 50*ms)
		fits := callBy(rl, 4, 150*ms)   // its turn: 100 ms
		behind := callBy(rl, 5, 150*ms) // behind it: 200 ms
		for _, ch := range []<-chan troupetest.Result[int]{early, behind} {
			r := <-ch
			var le *ratelimit.LimitedError
			require.ErrorAs(t, r.Err, &le)
			assert.ErrorIs(t, r.Err, ratelimit.ErrLimited)
			assert.ErrorIs(t, r.Err, troupe.ErrFull)
			assert.ErrorIs(t, r.Err, context.DeadlineExceeded)
		}
		assert.Equal(t, time.Duration(0), rec.since(), "both refused at once")
		assert.Equal(t, troupetest.Result[int]{Value: 4}, <-fits)
		assert.Equal(t, durations(ms, 0, 0, 0, 100), rec.times())
	})
}

// In the fixed window, and inside a stack: a Timeout outside the rate
// limit gives the request its deadline, and the stage outside answers the
// request it parked with the refusal at once.
//
// spec: PP2
func TestADeadlineBeforeTheTurnIsRefusedAtOnceInsideAStack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		st, err := stages.Stack[int, int]().Timeout(300*ms).
			RateLimit(ratelimit.Rate{Num: 1, Per: 400 * ms}).
			Build(troupetest.NewSystem(t), rec.service())
		require.NoError(t, err)
		ctx := context.Background()
		allOK(t, startInOrder(ctx, st, 0))
		r := <-troupetest.Go(ctx, st, 1) // its turn at 400 ms, its deadline at 300
		assert.ErrorIs(t, r.Err, ratelimit.ErrLimited)
		assert.ErrorIs(t, r.Err, context.DeadlineExceeded)
		assert.Equal(t, time.Duration(0), rec.since(), "refused at once")
		time.Sleep(400 * ms)
		allOK(t, startInOrder(ctx, st, 2))
		assert.Equal(t, durations(ms, 0, 400), rec.times())
		require.NoError(t, st.Close(ctx))
	})
}
