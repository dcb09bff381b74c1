package spawnready_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/stages/spawnready"
	"github.com/troupe-go/troupe/troupetest"
)

type callerKey struct{}

// spec: SR1
func TestSR1_ReadinessWaitRunsInTheBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pl := newPool()
		sr, err := spawnready.New[int, int](troupetest.NewSystem(t), pl)
		require.NoError(t, err)
		ctx := context.WithValue(context.Background(), callerKey{}, "caller")

		start := time.Now()
		p, err := sr.Reserve(ctx)
		require.NoError(t, err)
		assert.Zero(t, time.Since(start), "the caller's reservation returns at once")
		calls, _ := pl.snapshot()
		assert.Empty(t, calls, "without asking the inner service")

		c := call(ctx, p, 4)
		synctest.Wait()
		calls, _ = pl.snapshot()
		require.Len(t, calls, 1, "the call made the stage wait for the inner service")
		assert.Equal(t, "caller", calls[0].ctx.Value(callerKey{}), "the caller's context values reach the inner Reserve")
		assert.NoError(t, calls[0].ctx.Err(), "but not its cancellation")
		assert.NotEqual(t, goid(), calls[0].goid)

		// The next reservation watches that work: it waits until it is done.
		tctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = sr.Reserve(tctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		next := make(chan *troupe.Permit[int, int], 1)
		go func() {
			q, err := sr.Reserve(context.Background())
			assert.NoError(t, err)
			next <- q
		}()

		time.Sleep(time.Minute)
		select {
		case r := <-c:
			t.Fatalf("the call completed before the inner service was ready: %+v", r)
		default:
		}
		pl.ready <- nil // the pool has a connection now
		r := <-c
		require.NoError(t, r.err)
		assert.Equal(t, 40, r.v)
		assert.Equal(t, time.Minute+time.Second, r.at, "the call completes when the inner becomes ready")
		assert.NotEqual(t, r.goid, calls[0].goid, "the caller's goroutine is not the one that waited")

		q := <-next
		assert.Equal(t, time.Minute+time.Second, time.Since(start), "and the waiting reservation got the freed slot")
		require.NoError(t, q.Release())
		require.NoError(t, sr.Close(context.Background()))
		_, cancelled := pl.snapshot()
		assert.Zero(t, cancelled)
	})
}

// recordingMock implements stagekit.Inner (through the mock) and records its
// Reserve calls: a stage would normally never call Reserve on it.
type recordingMock struct {
	*troupetest.Mock[int, int]
	mu       sync.Mutex
	reserves []uint64 // goroutine ids; guarded by mu
}

func (m *recordingMock) Reserve(ctx context.Context) (*troupe.Permit[int, int], error) {
	m.mu.Lock()
	m.reserves = append(m.reserves, goid())
	m.mu.Unlock()
	return m.Mock.Reserve(ctx)
}

func (m *recordingMock) first() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reserves[0]
}

func (m *recordingMock) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.reserves)
}

// spec: SR1
func TestSR1_TheBackgroundWaitIsForcedForAnInnerThatNeedsNone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		ctx := context.Background()
		for _, tc := range []struct {
			name  string
			layer troupe.Layer[int, int]
			want  int
		}{
			{"buffer", buffer.Layer[int, int](1), 0},
			{"spawnready", spawnready.Layer[int, int](), 1},
		} {
			mock, h := troupetest.NewMock[int, int]()
			rec := &recordingMock{Mock: mock}
			svc, err := tc.layer.Layer(sys, rec)
			require.NoError(t, err)
			p, err := svc.Reserve(ctx)
			require.NoError(t, err)
			c := call(ctx, p, 1)
			synctest.Wait()
			h.Allow(1)
			req := h.Next(ctx)
			req.Respond(req.Value)
			r := <-c
			require.NoError(t, r.err)
			require.Equal(t, tc.want, rec.count(), "%s: Reserve calls on the inner service", tc.name)
			if tc.want > 0 {
				assert.NotEqual(t, r.goid, rec.first(), "made on another goroutine than the caller's")
			}
			require.NoError(t, svc.(troupe.Closer).Close(ctx))
		}
	})
}

// spec: SR1
func TestSR1_CallerGivingUpCancelsTheBackgroundWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pl := newPool()
		sr, err := spawnready.New[int, int](troupetest.NewSystem(t), pl)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		p, err := sr.Reserve(ctx)
		require.NoError(t, err)
		c := call(ctx, p, 1)
		synctest.Wait()
		time.Sleep(time.Second)
		cancel()
		r := <-c
		assert.ErrorIs(t, r.err, context.Canceled)
		assert.Equal(t, time.Second, r.at)
		synctest.Wait()
		calls, cancelled := pl.snapshot()
		assert.Len(t, calls, 1)
		assert.Equal(t, 1, cancelled, "the background wait was withdrawn")
		assert.Zero(t, sr.Stats().Used)

		// The stage goes on: a later call waits afresh.
		pl.ready <- nil
		q, err := sr.Reserve(context.Background())
		require.NoError(t, err)
		v, err := q.Call(context.Background(), 2)
		require.NoError(t, err)
		assert.Equal(t, 20, v)
	})
}

// spec: SR1
func TestSR1_InnerReadinessErrorBreaksTheStage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pl := newPool()
		sr, err := spawnready.New[int, int](troupetest.NewSystem(t), pl, spawnready.Capacity(2))
		require.NoError(t, err)
		ctx := context.Background()
		p, err := sr.Reserve(ctx)
		require.NoError(t, err)
		c := call(ctx, p, 1)
		synctest.Wait()
		cause := errors.New("dial refused")
		pl.ready <- cause
		r := <-c
		assert.ErrorIs(t, r.err, troupe.ErrClosed)
		assert.ErrorIs(t, r.err, cause)
		_, err = sr.Reserve(ctx)
		assert.ErrorIs(t, err, cause, "later callers are told why")
	})
}

// spec: SR1, ACT5
func TestSR1_CloseWithdrawsTheBackgroundWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pl := newPool()
		sr, err := spawnready.New[int, int](troupetest.NewSystem(t), pl)
		require.NoError(t, err)
		ctx := context.Background()
		p, err := sr.Reserve(ctx)
		require.NoError(t, err)
		c := call(ctx, p, 1)
		synctest.Wait()
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		assert.ErrorIs(t, sr.Close(cctx), context.DeadlineExceeded, "the inner service never got ready")
		r := <-c
		assert.ErrorIs(t, r.err, troupe.ErrClosed)
		synctest.Wait()
		_, cancelled := pl.snapshot()
		assert.Equal(t, 1, cancelled, "the background wait ended with the stage")
	})
}

func TestBadConfigIsAnError(t *testing.T) {
	_, err := spawnready.New[int, int](nil, newPool(), spawnready.Capacity(-1))
	troupetest.BadOption(t, err, "spawnready", "Capacity")
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
	_, err = spawnready.New[int, int](nil, nil)
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
}

func ExampleNew() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	pl := newPool() // a plain Service whose Reserve blocks until a connection is dialled
	sr, _ := spawnready.New[int, int](sys, pl)

	p, err := sr.Reserve(ctx) // returns at once: nobody dials yet
	fmt.Println(err)
	done := make(chan int)
	go func() { v, _ := p.Call(ctx, 7); done <- v }() // the dial waits in the background
	pl.ready <- nil                                   // the connection is up
	fmt.Println(<-done)
	// Output:
	// <nil>
	// 70
}
