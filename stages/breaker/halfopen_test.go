package breaker_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/troupetest"
)

// trip opens br over the mock with two failed calls (window 2).
func trip(t *testing.T, br *breaker.Breaker[int, int], h *troupetest.Handle[int, int]) {
	t.Helper()
	ctx := context.Background()
	for i := range 2 {
		c := troupetest.Go[int, int](ctx, br, i)
		h.Next(ctx).Fail(errDown)
		require.ErrorIs(t, (<-c).Err, errDown)
	}
	require.Equal(t, open, br.State())
}

// Half-open, the breaker lets 3 trial calls through and refuses the
// fourth at once; it decides only once all 3 have their outcome: 1 failure
// in 3 closes it; 2 in 3 open it again, although 2 failures were already
// more than half of 3 before the third outcome.
//
// spec: CB1, CB2, CB3
func TestCB1_HalfOpenLetsNTrialsThroughAndAllNDecide(t *testing.T) {
	for _, c := range []struct {
		name     string
		outcomes []error
		want     breaker.State
	}{
		{"closes", []error{errDown, nil, nil}, closed},
		{"reopens", []error{errDown, errDown, nil}, open},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := newRecorder()
				br, h := overMock(t, breaker.CountWindow(2), breaker.HalfOpenTrials(3), breaker.OpenDelay(time.Second), rec.option())
				ctx := context.Background()
				trip(t, br, h)
				at(rec.start, time.Second)
				var trials []<-chan troupetest.Result[int]
				var reqs []*troupetest.Request[int, int]
				for i := range 3 {
					trials = append(trials, troupetest.Go[int, int](ctx, br, 10+i))
					reqs = append(reqs, h.Next(ctx))
				}
				oe := openErr(t, run2(br, 99))
				assert.Equal(t, breaker.OpenError{State: halfOpen}, *oe, "the fourth is refused: the trials are under way")
				assert.Equal(t, int64(5), h.Calls(), "2 calls, then 3 trials; the fourth never reached the service")
				assert.Equal(t, breaker.Snapshot{State: halfOpen, Since: rec.start.Add(time.Second), InFlight: 3, Openings: 1, Refused: 1}, br.Snapshot())

				for i, err := range c.outcomes {
					if err != nil {
						reqs[i].Fail(err)
					} else {
						reqs[i].Respond(i)
					}
					r := <-trials[i]
					assert.Equal(t, err, r.Err)
					if i < 2 {
						s := br.Snapshot()
						assert.Equal(t, halfOpen, s.State, "trial %d of 3 does not decide", i+1)
						assert.Equal(t, [2]int{i + 1, 2 - i}, [2]int{s.Calls, s.InFlight})
					}
				}
				assert.Equal(t, c.want, br.State())
				assert.Equal(t, []change{{closed, open, 0}, {open, halfOpen, time.Second}, {halfOpen, c.want, time.Second}}, rec.changes())
			})
		})
	}
}

// run2 calls br with v and returns the error.
func run2(br troupe.Service[int, int], v int) error {
	_, err := troupe.Do(context.Background(), br, v)
	return err
}

// Only the calls let through in the current state count: a call let
// through while closed that fails once the breaker is half-open is not
// one of its trials, and does not reopen it.
//
// spec: CB1
func TestCB1_AnOutcomeFromAnEarlierStateDoesNotCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, h := overMock(t, breaker.CountWindow(2), breaker.HalfOpenTrials(1), breaker.OpenDelay(time.Second))
		ctx := context.Background()
		early := troupetest.Go[int, int](ctx, br, 0)
		earlyReq := h.Next(ctx)
		trip(t, br, h)
		time.Sleep(time.Second)
		trial := troupetest.Go[int, int](ctx, br, 1)
		trialReq := h.Next(ctx)
		assert.Equal(t, 1, br.Snapshot().InFlight, "the trial only")

		earlyReq.Fail(errDown)
		assert.ErrorIs(t, (<-early).Err, errDown)
		s := br.Snapshot()
		assert.Equal(t, halfOpen, s.State)
		assert.Equal(t, [2]int{0, 1}, [2]int{s.Calls, s.InFlight}, "not counted")

		trialReq.Respond(1)
		require.NoError(t, (<-trial).Err)
		assert.Equal(t, closed, br.State())
	})
}
