package ratelimit_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// A caller whose turn comes later than the maximum wait is refused at
// once, with the wait it would have had; one whose turn comes within it
// waits for it (failsafe-go's rate limiter TestAcquirePermitWithMaxWaitTime:
// one permit each 100 ms, the first waits 0, the second 100 ms, the third,
// whose turn is 200 ms away, is refused with ErrExceeded).
//
// spec: PP2
func TestMaxWaitRefusesAtOnceACallerWhoseTurnComesLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), ratelimit.Rate{Num: 1, Per: 100 * ms}, ratelimit.Smooth(1), ratelimit.MaxWait(150*ms))
		ctx := context.Background()
		chs := startInOrder(ctx, rl, 0, 1, 2)
		third := <-chs[2]
		assert.Equal(t, time.Duration(0), rec.since(), "refused at once")
		var le *ratelimit.LimitedError
		require.ErrorAs(t, third.Err, &le)
		assert.Equal(t, 200*ms, le.RetryAfter)
		assert.ErrorIs(t, third.Err, ratelimit.ErrLimited)
		assert.ErrorIs(t, third.Err, troupe.ErrFull)
		assert.NotErrorIs(t, third.Err, context.DeadlineExceeded)
		allOK(t, chs[:2])
		assert.Equal(t, durations(ms, 0, 100), rec.times())

		p, err := rl.Reserve(ctx) // at 100 ms: Limited until 200, within 150
		require.NoError(t, err)
		assert.Equal(t, 200*ms, rec.since())
		require.NoError(t, p.Release())
	})
}

// In the fixed window, the turn counts whole windows: with 2 a window of
// 100 ms and a maximum wait of 150 ms, the callers of the next window wait
// for it and the one after them is refused.
//
// spec: PP2
func TestMaxWaitCountsWholeWindowsAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), ratelimit.Rate{Num: 2, Per: 100 * ms}, ratelimit.MaxWait(150*ms))
		ctx := context.Background()
		chs := startInOrder(ctx, rl, 0, 1, 2, 3, 4)
		var le *ratelimit.LimitedError
		require.ErrorAs(t, (<-chs[4]).Err, &le)
		assert.Equal(t, 200*ms, le.RetryAfter)
		allOK(t, chs[:4])
		assert.Equal(t, durations(ms, 0, 0, 100, 100), rec.times())
	})
}

// Inside a stack, the stage outside answers the request it parked for a
// unit with the refusal, and carries on.
//
// spec: PP2
func TestMaxWaitRefusesARequestTheStageOutsideParks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		st, err := stages.Stack[int, int]().Buffer(4).
			RateLimit(ratelimit.Rate{Num: 1, Per: 100 * ms}, ratelimit.MaxWait(50*ms)).
			Build(troupetest.NewSystem(t), rec.service())
		require.NoError(t, err)
		ctx := context.Background()
		chs := startInOrder(ctx, st, 0, 1)
		assert.ErrorIs(t, (<-chs[1]).Err, ratelimit.ErrLimited)
		assert.Equal(t, time.Duration(0), rec.since(), "refused at once")
		allOK(t, chs[:1])
		time.Sleep(101 * ms) // past the window's end, not at it: the alarm and the caller would wake at one instant
		allOK(t, startInOrder(ctx, st, 2))
		assert.Equal(t, durations(ms, 0, 101), rec.times())
		require.NoError(t, st.Close(ctx))
	})
}

func TestMaxWaitNegativeOrWithRemoteIsBadConfig(t *testing.T) {
	f := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	_, err := ratelimit.New[int, int](nil, f, perSecond(1), ratelimit.MaxWait(-1))
	troupetest.BadOption(t, err, "ratelimit", "MaxWait")
}
