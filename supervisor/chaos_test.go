package supervisor_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/supervisor"
	"github.com/troupe-go/troupe/troupetest"
)

// faults counts what the chaos injected.
type faults struct {
	dials, dialFailures, panics, readiness, served atomic.Int64
}

// dice is a seeded source shared by a downstream's connections.
type dice struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (d *dice) roll(n int) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.r.IntN(n)
}

var errReadiness = errors.New("chaos: readiness failed")

// chaosConn is a connected service that panics (0.5 %) or fails its
// readiness (1 %) when asked for it, and otherwise echoes the request.
type chaosConn struct {
	f       *faults
	d       *dice
	permits troupe.PermitSource[int, int]
}

func (c *chaosConn) ready() (bool, error) {
	switch r := c.d.roll(1000); {
	case r < 5:
		c.f.panics.Add(1)
		panic("chaos: driver bug")
	case r < 15:
		c.f.readiness.Add(1)
		return false, errReadiness
	}
	return true, nil
}

func (c *chaosConn) TryReserve() (bool, error)                   { return c.ready() }
func (c *chaosConn) ReserveAsync(*stagekit.Waiter) (bool, error) { return c.ready() }
func (c *chaosConn) CancelWait(*stagekit.Waiter) bool            { return false }
func (c *chaosConn) Unreserve()                                  {}
func (c *chaosConn) Send(e *stagekit.Envelope[int, int])         { e.HandToCaller(c) }
func (c *chaosConn) Release()                                    {}
func (c *chaosConn) Call(_ context.Context, id int) (int, error) { c.f.served.Add(1); return id, nil }
func (c *chaosConn) Reserve(context.Context) (*troupe.Permit[int, int], error) {
	return c.permits.Issue(c), nil
}

// spec: SUP1, SUP3, SUP4, CORE6
func TestChaos_HundredThousandRequestsEightDownstreams(t *testing.T) {
	const requests, downstreams, callers = 100_000, 8, 128
	if testing.Short() {
		t.Skip("100,000 requests")
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	var f faults
	var ok, connectErr, restartErr atomic.Int64
	var other sync.Map
	var rcs []*reconnect.Reconnect[int, int]
	var pipes []*supervisor.Pipeline[int, int]
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		delays, err := backoff.New(time.Millisecond, 10*time.Millisecond, backoff.WithJitter(backoff.Full))
		require.NoError(t, err)
		var mu sync.Mutex
		g, err := supervisor.NewGroup(sys, func(key int) supervisor.Build[int, int] {
			d := &dice{r: rand.New(rand.NewPCG(uint64(key), 99))}
			dial := func(context.Context, int) (troupe.Service[int, int], error) {
				f.dials.Add(1)
				if d.roll(10) < 3 {
					f.dialFailures.Add(1)
					return nil, errors.New("chaos: dial refused")
				}
				return &chaosConn{f: &f, d: d}, nil
			}
			return func(h troupe.Host) (troupe.Service[int, int], error) {
				rc, err := reconnect.New(h, reconnect.Dialer(dial), key)
				mu.Lock()
				rcs = append(rcs, rc)
				mu.Unlock()
				return rc, err
			}
		}, supervisor.WithPipeline(supervisor.WithBackoff(delays, 1<<30, time.Second)))
		require.NoError(t, err)

		ids := make(chan int)
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				for id := range ids {
					p, err := g.Get(context.Background(), id%downstreams)
					if err != nil {
						other.Store(id, err)
						continue
					}
					v, err := troupe.Do[int, int](context.Background(), p, id)
					switch {
					case err == nil && v == id:
						ok.Add(1)
					case errors.Is(err, reconnect.ErrConnect):
						connectErr.Add(1)
					case errors.Is(err, troupe.ErrRestarted):
						restartErr.Add(1)
					default:
						other.Store(id, err)
					}
				}
			})
		}
		for id := range requests {
			ids <- id
		}
		close(ids)
		wg.Wait()
		for k := range downstreams {
			p, _ := g.Get(context.Background(), k)
			pipes = append(pipes, p)
		}
		require.NoError(t, g.Close(context.Background()))
	})

	other.Range(func(id, err any) bool {
		t.Errorf("request %v: unexpected outcome %v", id, err)
		return false
	})
	assert.Equal(t, int64(requests), ok.Load()+connectErr.Load()+restartErr.Load(), "every request got exactly one outcome")
	assert.Equal(t, f.served.Load(), ok.Load(), "every request served was answered to its caller")
	assert.Equal(t, f.dialFailures.Load(), connectErr.Load(), "each failed dial answered the request that waited for it")
	assert.Equal(t, f.panics.Load(), restartErr.Load(), "each panic answered the request in hand")

	var st reconnect.Counters
	for _, rc := range rcs {
		s := rc.Counters()
		st.Connects += s.Connects
		st.Failures += s.Failures
		st.Restarts += s.Restarts
	}
	assert.Equal(t, f.dials.Load()-f.dialFailures.Load(), st.Connects, "reconnects counted")
	connFaults := f.dialFailures.Load() + f.readiness.Load() + f.panics.Load()
	assert.Equal(t, connFaults, st.Failures, "failures counted")
	assert.Equal(t, connFaults, st.Restarts, "each connection fault restarted the connection actor")
	var restarts int64
	for _, p := range pipes {
		restarts += p.Stats().Restarts
		assert.NoError(t, p.Err())
	}
	assert.Equal(t, connFaults+f.panics.Load(), restarts, "plus one restart of the stage per panic")

	runtime.GC()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	t.Logf("%d ok, %d connect errors, %d restart errors; faults: %d dial failures, %d readiness, %d panics; heap %d KiB -> %d KiB",
		ok.Load(), connectErr.Load(), restartErr.Load(), f.dialFailures.Load(), f.readiness.Load(), f.panics.Load(), before.HeapAlloc>>10, after.HeapAlloc>>10)
	assert.Less(t, int64(after.HeapAlloc), int64(before.HeapAlloc)+2<<20, "memory returned to its starting level")
}
