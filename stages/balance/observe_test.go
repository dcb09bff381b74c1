package balance_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/troupetest"
)

// recorder keeps the events it is told of.
type recorder struct {
	mu  sync.Mutex
	evs []troupe.Event // guarded by mu
}

func (r *recorder) Observe(ev troupe.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
}

// of returns the endpoints of the events of type typ, in order.
func (r *recorder) of(typ troupe.EventType) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.evs {
		if ev.Type == typ {
			out = append(out, ev.Endpoint)
		}
	}
	return out
}

type ctxKey struct{}

// A balancer with an observer reports each pick, with the call's context,
// and each endpoint added, removed and drained, naming the endpoint by its
// key; every event names the pipeline, and the balancer as its stage.
//
// spec: BAL1
func TestTheObserverIsToldOfPicksAndEndpointsComingAndGoing(t *testing.T) {
	var rec recorder
	bal, err := balance.New[int, int, int](nil, balance.Observe(&rec, "replicas"))
	require.NoError(t, err)
	var a, b counted
	require.True(t, bal.Insert(1, a.svc()))
	require.True(t, bal.Insert(2, b.svc()))
	assert.Equal(t, []string{"1", "2"}, rec.of(troupe.EventEndpointAdded))

	ctx := context.WithValue(context.Background(), ctxKey{}, "call")
	for i := range 10 {
		_, err := troupe.Do[int, int](ctx, bal, i)
		require.NoError(t, err)
	}
	p, err := bal.Reserve(ctx)
	require.NoError(t, err)
	_, err = p.Call(ctx, 1)
	require.NoError(t, err)
	picks := rec.of(troupe.EventPicked)
	assert.Len(t, picks, 11, "each call, through Do or a permit")
	for _, k := range picks {
		assert.Contains(t, []string{"1", "2"}, k)
	}
	ones := slices.DeleteFunc(slices.Clone(picks), func(k string) bool { return k != "1" })
	assert.Len(t, ones, int(a.calls.Load()), "the picks of 1 are its calls")

	require.True(t, bal.Remove(1))
	assert.Equal(t, []string{"1"}, rec.of(troupe.EventEndpointRemoved))
	require.NoError(t, bal.Close(context.Background()))
	assert.Equal(t, []string{"1", "2"}, rec.of(troupe.EventEndpointRemoved))
	assert.ElementsMatch(t, []string{"1", "2"}, rec.of(troupe.EventEndpointDrained), "Close waits for the drains")

	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, ev := range rec.evs {
		assert.Equal(t, "replicas", ev.Pipeline)
		assert.Equal(t, balance.StageKind, ev.Stage)
		assert.Equal(t, balance.StageKind, ev.StageKind)
		if ev.Type == troupe.EventPicked {
			assert.Equal(t, "call", ev.Context.Value(ctxKey{}), "the call's context")
		} else {
			assert.Nil(t, ev.Context)
		}
	}
}

// name is a key that names itself.
type name struct{ zone, host string }

func (n name) String() string { return n.zone + "/" + n.host }

// A key that is a fmt.Stringer names its endpoint in the events.
//
// spec: BAL1
func TestAnEndpointKeyThatIsAStringerNamesItself(t *testing.T) {
	var rec recorder
	bal, err := balance.New[name, int, int](nil, balance.Observe(&rec, "p"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, bal.Close(context.Background())) })
	var c counted
	bal.Insert(name{"eu", "a"}, c.svc())
	_, err = troupe.Do[int, int](context.Background(), bal, 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"eu/a"}, rec.of(troupe.EventPicked))
}

// A panic in the observer at a pick is the call's outcome, an error
// matching troupe.ErrPanic, and the call is not made; the endpoint's
// count of calls in flight is back to zero. A panic at an event no call
// waits for is logged.
//
// spec: BAL1
func TestAPanicInTheObserverAtAPickIsTheCallsOutcome(t *testing.T) {
	var log troupetest.Log
	var panicking atomic.Bool
	panicking.Store(true)
	obs := troupe.ObserverFunc(func(ev troupe.Event) {
		if panicking.Load() {
			panic("observer")
		}
	})
	bal, err := balance.New[string, int, int](nil, balance.Observe(obs, "p"), balance.Logger(log.Logger()))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, bal.Close(context.Background())) })
	var c counted
	require.True(t, bal.Insert("a", c.svc()))
	assert.Contains(t, log.String(), "endpoint_added")
	_, err = troupe.Do[int, int](context.Background(), bal, 1)
	assert.ErrorIs(t, err, troupe.ErrPanic)
	_, err = bal.Reserve(context.Background())
	assert.ErrorIs(t, err, troupe.ErrPanic)
	assert.Zero(t, c.calls.Load(), "no call made")
	st := stats(bal)["a"]
	assert.Zero(t, st.Pending)
	assert.Zero(t, st.Errors)
	panicking.Store(false)
	_, err = troupe.Do[int, int](context.Background(), bal, 1)
	assert.NoError(t, err)
}

// countingObserver counts events, allocating nothing.
type countingObserver struct{ n atomic.Int64 }

func (c *countingObserver) Observe(troupe.Event) { c.n.Add(1) }

// A call through a balancer allocates as much with an observer that
// allocates nothing as without one, and without one the pick costs no
// allocation of its own.
//
// spec: BAL1
func TestAnObserverAddsNoAllocationToAPick(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("measures allocations")
	}
	var obs countingObserver
	allocs := func(opts ...balance.Option[int]) float64 {
		bal, err := balance.New[int, int, int](nil, opts...)
		require.NoError(t, err)
		defer bal.Close(context.Background())
		for k := range 3 {
			bal.Insert(k, actors.Func(func(_ context.Context, v int) (int, error) { return v, nil }))
		}
		ctx := context.Background()
		return testing.AllocsPerRun(1000, func() { _, _ = troupe.Do[int, int](ctx, bal, 1) })
	}
	without := allocs()
	with := allocs(balance.Observe(&obs, "p"))
	t.Logf("allocations per call: %v without an observer, %v with one", without, with)
	assert.Equal(t, without, with)
	assert.Positive(t, obs.n.Load())
}

// Stages gives each endpoint as a troupe.Stats, in the order inserted:
// its key as its name, its calls in flight as Used, no capacity of the
// balancer's, and its Snapshot as Detail.
//
// spec: BAL1
func TestStagesGivesEachEndpointAsAStageWithItsSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		held := newBlocking()
		var ok counted
		bal, err := balance.New[int, int, int](nil, seeded)
		require.NoError(t, err)
		defer bal.Close(context.Background())
		bal.Insert(7, held.svc())
		synctest.Wait()
		p, err := bal.Reserve(context.Background()) // 7, the only one
		require.NoError(t, err)
		bal.Insert(3, ok.svc())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = p.Call(context.Background(), 1)
		}()
		synctest.Wait()
		st := bal.Stages()
		require.Len(t, st, 2)
		assert.Equal(t, []string{"7", "3"}, []string{st[0].Name, st[1].Name})
		byKey := map[int]balance.EndpointStats[int]{}
		for _, s := range bal.Stats() {
			byKey[s.Key] = s
		}
		for i, k := range []int{7, 3} {
			assert.Equal(t, stagekit.MaxCapacity, st[i].Capacity)
			assert.Equal(t, byKey[k].Snapshot, st[i].Detail)
			assert.Equal(t, byKey[k].Pending, st[i].Used)
		}
		assert.Equal(t, []int{1, 0}, []int{st[0].Used, st[1].Used}, "the call held at 7")
		close(held.release)
		<-done
	})
}
