package stagekit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: CORE6, ACT5, HR2 — a close in the middle of many callers answers
// every accepted call exactly once. The middle is made, not hoped for: the
// inner service admits a fixed number of requests, so when Close comes
// (every goroutine of the bubble blocked) some callers are answered, some
// calls are running downstream, the stage is full (a request parked for the
// inner service, the rest queued behind it) and the other callers wait in
// line. Close's context is already done: the running calls are abandoned
// (their work's context is cancelled) and every caller not answered gets
// ErrClosed.
func TestCORE6_ACT5_TenThousandCallersAndACloseInTheMiddle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const callers, capacity = 10_000, 64
		const answered, inFlight = callers / 2, 100
		mock, h := troupetest.NewMock[int, int]()
		s := stage(t, troupetest.NewSystem(t), mock, capacity)
		h.Allow(answered + inFlight)

		// The downstream answers the first requests at once and keeps the
		// next ones running (until their context ends).
		var seen sync.Map
		var dup atomic.Int64
		held := make(chan *troupetest.Request[int, int], inFlight)
		dctx, stopDownstream := context.WithCancel(context.Background())
		downstream := make(chan struct{})
		go func() {
			defer close(downstream)
			for n := 0; ; n++ {
				r := h.Next(dctx)
				if r == nil {
					return
				}
				if _, loaded := seen.LoadOrStore(r.Value, true); loaded {
					dup.Add(1)
				}
				if n < answered {
					r.Respond(r.Value)
				} else {
					held <- r
				}
			}
		}()

		var ok, closed, wrong atomic.Int64
		var wg sync.WaitGroup
		for id := range callers {
			wg.Go(func() {
				v, err := troupe.Do[int, int](context.Background(), s, id)
				switch {
				case err == nil && v == id:
					ok.Add(1)
				case errors.Is(err, troupe.ErrClosed):
					closed.Add(1)
				default:
					wrong.Add(1)
				}
			})
		}
		synctest.Wait()
		st := stagekit.MailboxOf(s).Stats()
		assert.Equal(t, int64(answered), ok.Load(), "answered before the close")
		assert.Len(t, held, inFlight, "in flight downstream at the close")
		assert.Equal(t, capacity, st.Used, "the stage is full: one parked, the rest queued")
		assert.Equal(t, callers-answered-inFlight-capacity, st.Waiting, "the others wait in line")
		assert.Zero(t, closed.Load()+wrong.Load())

		ctx, cancel := context.WithCancel(context.Background())
		cancel() // close at once
		assert.ErrorIs(t, s.Close(ctx), context.Canceled)
		wg.Wait()
		stopDownstream()
		<-downstream

		require.Zero(t, wrong.Load(), "a caller got someone else's answer or an unexpected error")
		assert.Equal(t, int64(answered), ok.Load(), "answered: those the downstream answered")
		assert.Equal(t, int64(callers-answered), closed.Load(), "every other caller got ErrClosed")
		assert.Equal(t, int64(answered+inFlight), h.Calls(), "only the admitted requests reached the downstream")
		assert.Zero(t, dup.Load(), "no request was sent twice")
		for range inFlight {
			r := <-held
			assert.ErrorIs(t, r.Ctx.Err(), troupe.ErrClosed, "the work of an abandoned call was told to stop")
		}
		assert.Equal(t, 0, stagekit.MailboxOf(s).Stats().Used, "every slot came back")
	})
}
