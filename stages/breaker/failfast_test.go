package breaker_test

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
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/troupetest"
)

// While open, reserving returns at once and the call returns the
// *OpenError at once, saying when the breaker will try again; nothing
// reaches the service. That holds for a permit reserved before the
// breaker opened too, and for troupe.Do.
//
// spec: CB2
func TestCB2_AnOpenBreakerFailsFastWithoutReachingTheService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, h := overMock(t, breaker.CountWindow(2), breaker.OpenDelay(30*time.Second))
		ctx := context.Background()
		start := time.Now()
		early, err := br.Reserve(ctx)
		require.NoError(t, err)
		at(start, 2*time.Second)
		trip(t, br, h)
		require.Equal(t, int64(2), h.Calls())

		began := time.Now()
		p, err := br.Reserve(ctx)
		require.NoError(t, err, "an open breaker is not ready, and says so at once: the call fails")
		_, err = p.Call(ctx, 1)
		oe := openErr(t, err)
		assert.Equal(t, breaker.OpenError{State: open, RetryAt: start.Add(32 * time.Second)}, *oe)
		assert.Equal(t, 30*time.Second, oe.RetryAfter(time.Now()))
		assert.Equal(t, time.Duration(0), oe.RetryAfter(start.Add(40*time.Second)))

		_, err = early.Call(ctx, 2)
		assert.Same(t, oe, openErr(t, err), "a permit reserved while closed is judged when it is used")
		_, err = troupe.Do(ctx, br, 3)
		assert.Same(t, oe, openErr(t, err))

		assert.Zero(t, time.Since(began), "none of them waited")
		assert.Equal(t, int64(2), h.Calls(), "none of them reached the service")
		assert.Zero(t, h.Waiting())
		s := br.Snapshot()
		assert.Equal(t, uint64(3), s.Refused)
		assert.Zero(t, br.Stats().Used, "a refused call holds no slot")
		assert.Equal(t, actors.MaxCapacity, br.Stats().Capacity, "no capacity of its own: reserving never waits")
	})
}

// A stage outside the breaker (a Timeout, a Retry) sends its requests
// through the breaker's inner side: refused just as fast, and a Retry
// outside sees ErrOpen as it sees any error.
//
// spec: CB2
func TestCB2_StagesOutsideTheBreakerAreRefusedAtOnceToo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		mock, h := troupetest.NewMock[int, int]()
		h.Allow(100)
		st, err := stages.Stack[int, int]().Retry(2, nil).Timeout(time.Minute).
			Breaker(breaker.CountWindow(1), breaker.OpenDelay(time.Hour)).Build(sys, mock)
		require.NoError(t, err)
		ctx := context.Background()
		c := troupetest.Go[int, int](ctx, st, 1)
		h.Next(ctx).Fail(errDown) // opens the breaker
		start := time.Now()
		r := <-c
		require.ErrorIs(t, r.Err, breaker.ErrOpen, "the retries were refused")
		assert.Zero(t, time.Since(start))
		assert.Equal(t, int64(1), h.Calls())
		bs, ok := st.Stats("breaker")
		require.True(t, ok)
		assert.Equal(t, uint64(2), bs.Detail.(breaker.Snapshot).Refused)
	})
}
