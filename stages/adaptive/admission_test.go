package adaptive_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: AL1, CORE1, ACT2
// Readiness is a reservation against the current limit: with the limit's
// permits reserved, reserving waits in the stage's line, and a stage
// outside it finds it not ready (a LoadShed there sheds once its own slot
// waits), until a permit comes back.
func TestAL1_ReadinessIsAReservationAgainstTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, h := overMock(t, 1, adaptive.Limits(1, 50), adaptive.Initial(3))
		ctx := context.Background()
		require.Equal(t, 3, a.Limit())
		assert.Equal(t, 3, a.Available())

		var ps []*troupe.Permit[int, int]
		for range 3 {
			p, err := a.Reserve(ctx)
			require.NoError(t, err)
			ps = append(ps, p)
		}
		assert.Equal(t, 0, a.Available())
		st := a.Stats()
		assert.Equal(t, 50, st.Capacity, "the mailbox has room for the max")
		assert.Equal(t, 50, st.Used, "the slots above the limit are held back")

		got := make(chan error, 1)
		go func() {
			p, err := a.Reserve(ctx)
			if err == nil {
				err = p.Release()
			}
			got <- err
		}()
		synctest.Wait()
		assert.Equal(t, 1, a.Stats().Waiting, "a fourth caller waits in line")
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := a.Reserve(dctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		require.NoError(t, ps[0].Release())
		assert.NoError(t, <-got, "a released permit goes to the first in line")
		p, err := a.Reserve(ctx)
		require.NoError(t, err)
		ps[0] = p

		shed, err := loadshed.New[int, int](troupetest.NewSystem(t), a, loadshed.Capacity(1))
		require.NoError(t, err)
		first := troupetest.Go(ctx, shed, 1) // waits in the LoadShed for the limit
		synctest.Wait()
		_, err = troupe.Do(ctx, shed, 2)
		assert.ErrorIs(t, err, loadshed.ErrOverloaded)
		assert.Nil(t, h.TryNext())

		require.NoError(t, ps[0].Release())
		h.Next(ctx).Respond(1)
		assert.NoError(t, (<-first).Err)
		for _, p := range ps[1:] {
			require.NoError(t, p.Release())
		}
		synctest.Wait()
		assert.Equal(t, 3, a.Available())
		require.NoError(t, shed.Close(ctx))
	})
}

// spec: AL1, C2
// A cut applies to the callers already in line: the slot of a call that
// ends after a cut goes back to the stage, not to the next caller, until
// in flight plus reserved is within the new limit.
func TestAL1_ACutAppliesToCallersAlreadyInLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, h := overMock(t, 1, adaptive.Limits(1, 50), adaptive.Initial(4))
		ctx := context.Background()
		outs, reqs := inFlight(a, h, ctx, 4)
		var line []<-chan troupetest.Result[int]
		for i := range 4 {
			line = append(line, troupetest.Go(ctx, a, 10+i))
			synctest.Wait() // in line in this order
		}
		require.Equal(t, 4, a.Stats().Waiting)

		reqs[0].Fail(errOverload) // 4 * 0.9: the limit is 3
		assert.ErrorIs(t, (<-outs[0]).Err, errOverload)
		synctest.Wait()
		assert.Equal(t, 3, a.Limit())
		assert.Equal(t, 4, a.Stats().Waiting, "the freed slot was taken back: 3 in flight, 3 allowed")
		assert.Nil(t, h.TryNext())

		reqs[1].Respond(1) // sent before the cut: not measured, its slot goes on
		require.NoError(t, (<-outs[1]).Err)
		next := h.Next(ctx)
		assert.Equal(t, 10, next.Value, "the first in line goes")
		synctest.Wait()
		assert.Nil(t, h.TryNext())
		assert.Equal(t, 3, a.Limit())
		assert.Equal(t, 3, a.Snapshot().InFlight)

		reqs[2].Respond(2)
		reqs[3].Respond(3)
		next.Respond(10)
		var rest []int
		for range 3 { // three slots came back: the rest of the line goes
			r := h.Next(ctx)
			rest = append(rest, r.Value)
			r.Respond(r.Value)
		}
		assert.ElementsMatch(t, []int{11, 12, 13}, rest)
		for _, ch := range append(outs[2:], line...) {
			assert.NoError(t, (<-ch).Err)
		}
		synctest.Wait()
		assert.Equal(t, a.Limit(), a.Available())
	})
}

// spec: AL1
// No call reaches the service inside while the calls in flight there are
// at the limit in effect, while the limit moves up and down: driven by
// many callers, through latency changes and random failures.
func TestAL1_NeverAdmitsAboveTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		h := newHistory(adaptive.DefaultMin)
		d := &knee{k: 6, base: 5 * time.Millisecond, start: start, check: h.check}
		d.phase = func(since time.Duration) (bool, time.Duration) {
			ms := since.Milliseconds()
			return ms%700 < 40, time.Duration(1 + ms/500%3) // bursts of failures; latency 1x, 2x, 3x
		}
		a, err := adaptive.New[int, int](troupetest.NewSystem(t), actors.Func(d.call),
			adaptive.Limits(1, 30), adaptive.Initial(30), adaptive.OnLimitChange(h.told(start)))
		require.NoError(t, err)
		drive(a, 40, start, 4*time.Second)

		h.mu.Lock()
		assert.Empty(t, h.over)
		assert.Zero(t, h.outOfOrder)
		ups, downs := 0, 0
		for i := 1; i < len(h.changes); i++ {
			if h.changes[i].limit > h.changes[i-1].limit {
				ups++
			} else {
				downs++
			}
		}
		h.mu.Unlock()
		t.Logf("%d increases, %d decreases", ups, downs)
		assert.GreaterOrEqual(t, min(ups, downs), 10, "the limit moved both ways")
		assert.Positive(t, a.Snapshot().Cuts)
		d.mu.Lock()
		assert.LessOrEqual(t, d.peak, 30)
		d.mu.Unlock()
		assert.Equal(t, a.Limit(), a.Available())
	})
}

// spec: AL1
// The limit never leaves the min and the max: it grows to the max over a
// service that never queues, and an outage cuts it to the min, no further.
func TestAL1_MinAndMaxBoundTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		h := newHistory(2)
		d := &knee{k: 1000, base: 10 * time.Millisecond, start: start, check: h.check}
		d.phase = func(since time.Duration) (bool, time.Duration) { return since >= time.Second, 1 }
		a, err := adaptive.New[int, int](troupetest.NewSystem(t), actors.Func(d.call),
			adaptive.Limits(2, 5), adaptive.OnLimitChange(h.told(start)))
		require.NoError(t, err)
		assert.Equal(t, 2, a.Limit(), "the first probe runs at the min")
		drive(a, 20, start, 2*time.Second)

		lo, hi := h.between(500*time.Millisecond, time.Second)
		assert.Equal(t, [2]int{5, 5}, [2]int{lo, hi}, "at the max, the default initial 20 taken down to it")
		lo, hi = h.between(1500*time.Millisecond, 2*time.Second)
		assert.Equal(t, [2]int{2, 2}, [2]int{lo, hi}, "at the min")
		lo, hi = h.between(0, 2*time.Second)
		assert.Equal(t, [2]int{2, 5}, [2]int{lo, hi})
		d.mu.Lock()
		assert.Equal(t, 5, d.peak)
		d.mu.Unlock()
		h.mu.Lock()
		assert.Empty(t, h.over)
		h.mu.Unlock()
	})
}
