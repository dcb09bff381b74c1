package ratelimit_test

import (
	"context"
	"errors"
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

// goAll starts n calls at once and returns their results' channels.
func goAll(ctx context.Context, s troupe.Service[int, int], n int) []<-chan troupetest.Result[int] {
	outs := make([]<-chan troupetest.Result[int], n)
	for i := range outs {
		outs[i] = troupetest.Go[int, int](ctx, s, i)
	}
	return outs
}

// spec: Q1 — a grant that says "the last unit until then" makes the stage
// Limited without a round trip: one ask per call, spaced as the limiter
// says.
func TestQ1_RemoteGrantWithRetryAfterLimitsWithoutAsking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		lim := &fakeRemote{interval: 100 * ms, tell: true}
		rl := newRL(t, rec.service(), perSecond(10), ratelimit.Remote(lim))
		ctx := context.Background()
		outs := goAll(ctx, rl, 5)
		synctest.Wait()
		assert.True(t, rl.Limited(), "the first call's grant said: next unit in 100 ms")
		assert.Equal(t, ratelimit.Snapshot{Limited: true, Until: rec.start.Add(100 * ms)}, rl.Snapshot())
		for _, o := range outs {
			require.NoError(t, (<-o).Err)
		}
		assert.Equal(t, durations(ms, 0, 100, 200, 300, 400), rec.times())
		asks, peak := lim.stats()
		assert.Equal(t, 5, asks, "no ask while Limited: the alarm drove the stage")
		assert.Equal(t, 1, peak)
		time.Sleep(100 * ms)
		synctest.Wait()
		assert.False(t, rl.Limited())
		assert.Equal(t, ratelimit.Snapshot{Remaining: -1}, rl.Snapshot(), "remote: the stage does not know what is left")
	})
}

// spec: Q1 — a refusal keeps the call, makes the stage Limited (not ready:
// reservations wait) until the retry-after, and the alarm asks again then.
func TestQ1_RemoteRefusalLimitsUntilRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		lim := &fakeRemote{interval: 300 * ms}
		lim.next = time.Now().Add(300 * ms) // another process took the unit
		rl := newRL(t, rec.service(), perSecond(3), ratelimit.Remote(lim))
		ctx := context.Background()
		first := troupetest.Go[int, int](ctx, rl, 1)
		synctest.Wait()
		assert.True(t, rl.Limited())
		assert.Equal(t, rec.start.Add(300*ms), rl.Snapshot().Until)
		done, cancel := context.WithCancel(ctx)
		cancel()
		_, err := rl.Reserve(done)
		assert.ErrorIs(t, err, context.Canceled, "not ready while Limited")
		require.NoError(t, (<-first).Err)
		assert.Equal(t, durations(ms, 300), rec.times())
		asks, _ := lim.stats()
		assert.Equal(t, 2, asks, "refused once, asked again when the alarm fired")
	})
}

// spec: Q1 — the round trip runs on goroutines of the stage's own, several
// at once up to MaxAsks, while the actor goes on: a caller that gives up
// during an ask gets its context's error at once, and Close waits for the
// asks.
func TestQ1_RemoteRoundTripsRunOffTheActorBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		lim := &fakeRemote{}
		rl := newRL(t, rec.service(), perSecond(1000), ratelimit.Remote(lim), ratelimit.MaxAsks(3))
		ctx := context.Background()
		require.NoError(t, (<-troupetest.Go[int, int](ctx, rl, 0)).Err, "an open answer: up to 3 asks at once now")
		hold := make(chan struct{})
		lim.set(func(f *fakeRemote) { f.hold = hold })
		cctx, cancel := context.WithCancel(ctx)
		gone := troupetest.Go[int, int](cctx, rl, 1)
		synctest.Wait() // asked about first
		outs := goAll(ctx, rl, 5)
		synctest.Wait()
		_, peak := lim.stats()
		assert.Equal(t, 3, peak, "three round trips at once, no more")
		cancel()
		assert.ErrorIs(t, (<-gone).Err, context.Canceled, "the actor is free: the caller's cancellation is its outcome at once")
		synctest.Wait()
		st := rl.Stats()
		assert.Equal(t, 5, st.Used, "the others hold their slots, waiting")
		close(hold)
		for _, o := range outs {
			require.NoError(t, (<-o).Err)
		}
		_, peak = lim.stats()
		assert.Equal(t, 3, peak)
		assert.Len(t, rec.times(), 6)
	})
}

// spec: Q1 — the limiter's error is the call's outcome, wrapped: it does not
// make the stage Limited; a panic in it is an outcome too.
func TestQ1_RemoteErrorIsTheOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		down := errors.New("store unreachable")
		lim := &fakeRemote{err: down}
		rl := newRL(t, rec.service(), perSecond(5), ratelimit.Remote(lim))
		ctx := context.Background()
		for _, o := range goAll(ctx, rl, 3) {
			err := (<-o).Err
			assert.ErrorIs(t, err, ratelimit.ErrLimiter)
			assert.ErrorIs(t, err, down)
		}
		assert.False(t, rl.Limited())
		lim.set(func(f *fakeRemote) { f.err, f.panicVal = nil, "limiter bug" })
		r := <-troupetest.Go[int, int](ctx, rl, 9)
		assert.ErrorIs(t, r.Err, troupe.ErrPanic)
		assert.ErrorIs(t, r.Err, ratelimit.ErrLimiter)
		lim.set(func(f *fakeRemote) { f.panicVal = nil })
		assert.NoError(t, (<-troupetest.Go[int, int](ctx, rl, 10)).Err, "the stage carries on")
		assert.Len(t, rec.times(), 1, "only the last call reached the service")
	})
}

// spec: Q1 — closing while asks run and calls wait: a graceful close
// waits for them; an aborted one answers them with ErrClosed, and the
// asks' contexts end.
func TestQ1_RemoteCloseWhileAsking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		lim := &fakeRemote{hold: make(chan struct{})}
		rl := newRL(t, rec.service(), perSecond(5), ratelimit.Remote(lim))
		ctx := context.Background()
		outs := goAll(ctx, rl, 3)
		synctest.Wait()
		cctx, cancel := context.WithTimeout(ctx, 200*ms)
		defer cancel()
		assert.ErrorIs(t, rl.Close(cctx), context.DeadlineExceeded)
		for _, o := range outs {
			assert.ErrorIs(t, (<-o).Err, troupe.ErrClosed)
		}
		assert.Empty(t, rec.times())

		hold := make(chan struct{})
		lim = &fakeRemote{hold: hold}
		rl = newRL(t, rec.service(), perSecond(5), ratelimit.Remote(lim), ratelimit.MaxAsks(2))
		outs = goAll(ctx, rl, 2)
		synctest.Wait()
		closed := make(chan error, 1)
		go func() { closed <- rl.Close(ctx) }()
		synctest.Wait()
		select {
		case err := <-closed:
			t.Fatalf("Close returned %v while asks ran", err)
		default:
		}
		close(hold)
		require.NoError(t, <-closed, "a graceful close waits for the asks and lets their calls go")
		for _, o := range outs {
			assert.NoError(t, (<-o).Err)
		}
	})
}

// spec: Q1
func TestQ1_RemoteBadConfigurationIsAnError(t *testing.T) {
	f := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	lim := &fakeRemote{interval: ms}
	for name, tc := range map[string]struct {
		opts []ratelimit.Option
		want string // the option refused
	}{
		"nil limiter":      {[]ratelimit.Option{ratelimit.Remote(nil)}, "Remote"},
		"smooth":           {[]ratelimit.Option{ratelimit.Remote(lim), ratelimit.Smooth(1)}, "Remote"},
		"another rate":     {[]ratelimit.Option{ratelimit.Remote(ratedRemote{lim, perSecond(4)})}, "Remote"},
		"no asks":          {[]ratelimit.Option{ratelimit.Remote(lim), ratelimit.MaxAsks(0)}, "MaxAsks"},
		"negative asks":    {[]ratelimit.Option{ratelimit.Remote(lim), ratelimit.MaxAsks(-1)}, "MaxAsks"},
		"too many asks":    {[]ratelimit.Option{ratelimit.Remote(lim), ratelimit.MaxAsks(1025)}, "MaxAsks"},
		"bad rate as ever": {[]ratelimit.Option{ratelimit.Remote(lim), ratelimit.Capacity(-1)}, "Capacity"},
	} {
		assert.NotPanics(t, func() {
			rl, err := ratelimit.New[int, int](nil, f, perSecond(5), tc.opts...)
			assert.Nil(t, rl, name)
			troupetest.BadOption(t, err, "ratelimit", tc.want)
		})
	}
	rl, err := ratelimit.New[int, int](troupetest.NewSystem(t), f, perSecond(5), ratelimit.Remote(ratedRemote{lim, perSecond(5)}))
	require.NoError(t, err, "the limiter's own rate, matching")
	assert.Equal(t, perSecond(5), rl.Rate())
}

// spec: Q1 — through the stack builder's RateLimit, with an observer told
// of the Limited state the limiter's answers drive.
func TestQ1_RemoteInTheStackBuilder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		lim := &fakeRemote{interval: 50 * ms, tell: true}
		obs := &changes{}
		st, err := stages.Stack[int, int]().
			Observe(obs, "shared").
			Limit(4).
			RateLimit(perSecond(20), ratelimit.Remote(lim)).
			Build(troupetest.NewSystem(t), rec.service())
		require.NoError(t, err)
		for _, o := range goAll(context.Background(), st, 6) {
			require.NoError(t, (<-o).Err)
		}
		assert.Equal(t, durations(ms, 0, 50, 100, 150, 200, 250), rec.times())
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"limited", "ready"}, obs.get()[:2])
		assert.Equal(t, "ready", obs.get()[len(obs.get())-1])
	})
}
