package troupeotel_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	m "github.com/troupe-go/troupe/troupeotel"
)

// ev is an event of stage name (kind its prefix) in pipeline "p".
func ev(typ troupe.EventType, stage string) troupe.Event {
	kind := stage
	for i := range stage {
		if stage[i] == '-' {
			kind = stage[:i]
			break
		}
	}
	return troupe.Event{Type: typ, Pipeline: "p", Stage: stage, StageKind: kind}
}

// spec: OB2
func TestOB2_PolicyEventsWithoutAScriptAreRecorded(t *testing.T) {
	obs, reader := newObserver(t)
	h1, h2 := ev(troupe.EventHedged, "hedge"), ev(troupe.EventHedged, "hedge")
	h1.Attempt, h2.Attempt = 1, 2
	obs.Observe(h1)
	obs.Observe(h2)
	obs.Observe(h1)
	obs.Observe(ev(troupe.EventFallback, "fallback"))
	for _, n := range []int{10, 7, 12} {
		l := ev(troupe.EventLimitChanged, "adaptive")
		l.Limit = n
		obs.Observe(l)
	}
	rc := ev(troupe.EventStateChanged, "reconnect")
	rc.From, rc.To = "Idle", "Connecting"
	obs.Observe(rc)
	rl := ev(troupe.EventStateChanged, "ratelimit-2")
	rl.From, rl.To = "ready", "limited"
	obs.Observe(rl)
	obs.Observe(ev(troupe.EventRestarted, "reconnect"))
	obs.Observe(ev(troupe.EventType(200), "reconnect")) // unknown: ignored
	fin := ev(troupe.EventFinished, "fallback")
	fin.Outcome, fin.Latency = troupe.OutcomeSuccess, 250*time.Millisecond
	obs.Observe(ev(troupe.EventAccepted, "fallback"))
	obs.Observe(ev(troupe.EventAccepted, "fallback"))
	obs.Observe(fin)

	got := collect(t, reader)
	assert.Equal(t, map[string]int64{"hedge 1": 2, "hedge 2": 1}, got.ints(t, "p", m.MetricHedges))
	assert.Equal(t, map[string]int64{"fallback": 1}, got.ints(t, "p", m.MetricFallbacks))
	assert.Equal(t, map[string]int64{"adaptive": 12}, got.ints(t, "p", m.MetricLimit))
	assert.Equal(t, map[string]int64{"reconnect Idle Connecting": 1, "ratelimit-2 ready limited": 1},
		got.ints(t, "p", m.MetricStateChanges))
	assert.Equal(t, map[string]int64{"reconnect": 1}, got.ints(t, "p", m.MetricRestarts))
	assert.Equal(t, map[string]int64{"fallback": 1}, got.ints(t, "p", m.MetricActiveCalls))
	assert.Equal(t, map[string]string{"fallback success": "1 0.25"}, got.hist(t, "p"))
	d := got[m.MetricCallDuration]
	assert.Equal(t, "s", d.Unit)
	assert.Equal(t, "{call}", got[m.MetricCalls].Unit)
}

// spec: OB2
func TestOB2_ObserveAllocatesNothingOnceAStageIsKnown(t *testing.T) {
	obs, _ := newObserver(t)
	evs := []troupe.Event{ev(troupe.EventAccepted, "retry"), ev(troupe.EventStarted, "retry"),
		ev(troupe.EventRetried, "retry"), ev(troupe.EventFinished, "retry"), ev(troupe.EventRejected, "retry"),
		ev(troupe.EventPicked, "balance")}
	evs[2].Attempt = 3
	evs[5].Endpoint = "10.0.0.7:443"
	evs[3].Latency = time.Millisecond
	evs[4].Reason = troupe.ReasonOverloaded
	for _, e := range evs {
		obs.Observe(e)
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, e := range evs {
			obs.Observe(e)
		}
	})
	assert.Zero(t, allocs)
}

// spec: OB2
func TestOB2_ConcurrentObserversCountEveryEvent(t *testing.T) {
	obs, reader := newObserver(t)
	const goroutines, each = 8, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			stage := []string{"limit", "timeout"}[g%2]
			for range each {
				obs.Observe(ev(troupe.EventAccepted, stage))
				obs.Observe(ev(troupe.EventFinished, stage))
			}
		})
	}
	wg.Wait()
	got := collect(t, reader)
	require.Equal(t, map[string]int64{"limit success": goroutines / 2 * each, "timeout success": goroutines / 2 * each},
		got.ints(t, "p", m.MetricCalls))
	require.Equal(t, map[string]int64{"limit": 0, "timeout": 0}, got.ints(t, "p", m.MetricActiveCalls))
}
