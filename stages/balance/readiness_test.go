package balance_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/troupetest"
)

// An endpoint whose Reserve fails is not picked; the balancer tries it
// again after each delay of its backoff.
//
// spec: BAL1
func TestAnEndpointWhoseReserveFailsIsTriedAgainAfterTheBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		broken, h := troupetest.NewMock[int, int]()
		h.Break(nil)
		var ok counted
		delays, err := backoff.New(100*time.Millisecond, time.Second)
		require.NoError(t, err)
		bal := newBalancer(t, map[string]troupe.Service[int, int]{"broken": broken, "ok": ok.svc()}, balance.WithBackoff(delays))
		callMany(t, bal, 50)
		assert.Equal(t, int64(50), ok.calls.Load())
		synctest.Wait()
		assert.Equal(t, uint64(1), stats(bal)["broken"].ReserveErrors)
		time.Sleep(100*time.Millisecond + 200*time.Millisecond + 400*time.Millisecond) // 100, 200, 400 ms
		synctest.Wait()
		s := stats(bal)["broken"]
		assert.Equal(t, uint64(4), s.ReserveErrors, "tried again at 100, 300 and 700 ms")
		assert.False(t, s.Ready)
		assert.Zero(t, s.Picks)
	})
}

var errBusy = errors.New("busy")

// A call refused (Refused says which errors are refusals) pauses its
// endpoint for the backoff's next delay, longer at each refusal in a row;
// a success resets it.
//
// spec: BAL1
func TestARefusedCallPausesItsEndpointForTheBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var refuse atomic.Bool
		refuse.Store(true)
		svc := actors.Func(func(context.Context, int) (int, error) {
			if refuse.Load() {
				return 0, errBusy
			}
			return 1, nil
		})
		delays, err := backoff.New(100*time.Millisecond, time.Second)
		require.NoError(t, err)
		bal := newBalancer(t, map[string]troupe.Service[int, int]{"a": svc},
			balance.WithBackoff(delays), balance.Refused(func(err error) bool { return errors.Is(err, errBusy) }))
		ctx := context.Background()
		for _, pause := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
			_, err := troupe.Do[int, int](ctx, bal, 0)
			require.ErrorIs(t, err, errBusy)
			s := stats(bal)["a"]
			assert.True(t, s.Paused)
			assert.Equal(t, time.Now().Add(pause), s.PausedUntil)
			start := time.Now()
			p, err := bal.Reserve(ctx) // waits for the pause to end
			require.NoError(t, err)
			assert.Equal(t, pause, time.Since(start))
			require.NoError(t, p.Release())
		}
		refuse.Store(false)
		_, err = troupe.Do[int, int](ctx, bal, 0)
		require.NoError(t, err)
		refuse.Store(true)
		_, err = troupe.Do[int, int](ctx, bal, 0)
		require.ErrorIs(t, err, errBusy)
		assert.Equal(t, time.Now().Add(100*time.Millisecond), stats(bal)["a"].PausedUntil, "the success reset the backoff")
	})
}

// Close gives up waiting for calls in flight when its context ends: the
// endpoints the balancer owns are closed with a context already done, so
// their work is told to stop, and Close returns the context's error.
//
// spec: BAL1
func TestCloseStopsWaitingForTheDrainWhenItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stuck := newBlocking()
		closed := make(chan struct{})
		ep := &closable{Service: stuck.svc(), onClose: func() { close(closed) }}
		ch := make(chan balance.Change[string, int, int], 1)
		ch <- balance.Change[string, int, int]{Op: balance.Insert, Key: "a", Service: ep, Owned: true}
		bal, err := balance.New(balance.Channel(ch))
		require.NoError(t, err)
		call := troupetest.Go[int, int](context.Background(), bal, 1)
		synctest.Wait()
		require.Equal(t, int64(1), stuck.calls.Load())
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err = bal.Close(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		<-closed
		close(stuck.release)
		assert.NoError(t, (<-call).Err, "the call itself is the endpoint's to answer")
	})
}
