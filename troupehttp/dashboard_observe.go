package troupehttp

import (
	"maps"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe"
)

// maxObservedStages bounds the stages the observer counts per pipeline, so
// that a pipeline's memory stays bounded whatever names its events carry.
const maxObservedStages = 1024

// dashObserver counts, per registered pipeline and stage, what a dashboard
// shows that the stats do not have. Safe for concurrent use.
type dashObserver struct {
	mu    sync.Mutex                               // serialises register
	pipes atomic.Pointer[map[string]*pipeCounters] // registered pipelines: replaced whole, read without a lock
}

// pipeCounters are one pipeline's stages' counters, made at their first
// event.
type pipeCounters struct {
	mu     sync.Mutex                                // serialises adding a stage
	stages atomic.Pointer[map[string]*stageCounters] // replaced whole, read without a lock
}

// stageCounters are one stage's cumulative counts; read by the sampler,
// added to by the observer, both without a lock.
type stageCounters struct {
	accepted, rejected, failed, retries atomic.Uint64
	latency                             latencyHist
}

func newDashObserver() *dashObserver {
	o := &dashObserver{}
	o.pipes.Store(&map[string]*pipeCounters{})
	return o
}

// register makes pipeline's events counted from now on.
func (o *dashObserver) register(pipeline string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := &pipeCounters{}
	p.stages.Store(&map[string]*stageCounters{})
	pipes := maps.Clone(*o.pipes.Load())
	pipes[pipeline] = p
	o.pipes.Store(&pipes)
}

// Observe counts ev, when it is of a kind the dashboard shows and its
// pipeline is registered.
func (o *dashObserver) Observe(ev troupe.Event) {
	switch ev.Type {
	case troupe.EventAccepted, troupe.EventRejected, troupe.EventFinished, troupe.EventRetried:
	default:
		return
	}
	c := o.counters(ev.Pipeline, ev.Stage, true)
	if c == nil {
		return
	}
	switch ev.Type {
	case troupe.EventAccepted:
		c.accepted.Add(1)
	case troupe.EventRejected:
		c.rejected.Add(1)
	case troupe.EventRetried:
		c.retries.Add(1)
	case troupe.EventFinished:
		c.latency.add(ev.Latency)
		switch ev.Outcome {
		case troupe.OutcomeFailure, troupe.OutcomeTimeout, troupe.OutcomePanic:
			c.failed.Add(1)
		}
	}
}

// counters returns the counters of stage in pipeline, making them when create
// is set; nil for a pipeline not registered (or a stage not seen, without
// create).
func (o *dashObserver) counters(pipeline, stage string, create bool) *stageCounters {
	p := o.pipe(pipeline)
	if p == nil {
		return nil
	}
	if c := (*p.stages.Load())[stage]; c != nil || !create {
		return c
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	stages := *p.stages.Load()
	c := stages[stage]
	if c == nil && len(stages) < maxObservedStages {
		c = new(stageCounters)
		next := maps.Clone(stages)
		next[stage] = c
		p.stages.Store(&next)
	}
	return c
}

// observed reports whether any event of pipeline was counted: whether the
// stack was built with the observer.
func (o *dashObserver) observed(pipeline string) bool {
	p := o.pipe(pipeline)
	if p == nil {
		return false
	}
	return len(*p.stages.Load()) > 0
}

// pipe returns the counters of pipeline; nil when it is not registered.
func (o *dashObserver) pipe(pipeline string) *pipeCounters {
	return (*o.pipes.Load())[pipeline]
}

// The latency histogram: log-linear buckets of nanoseconds, 16 to each
// power of two, so a percentile read from it is within 1/16 of the true
// value.
const (
	histSub     = 4 // bits of mantissa below the leading one
	histBuckets = (64-histSub)<<histSub + 1<<histSub
)

// latencyHist counts latencies in buckets; add is lock-free.
type latencyHist [histBuckets]atomic.Uint64

func (h *latencyHist) add(d time.Duration) {
	h[histIndex(uint64(max(d, 0)))].Add(1)
}

// histIndex is the bucket of v nanoseconds.
func histIndex(v uint64) int {
	if v < 1<<histSub {
		return int(v)
	}
	e := bits.Len64(v) // > histSub
	m := v >> (e - histSub - 1)
	return (e-histSub)<<histSub + int(m-1<<histSub)
}

// histMid is the middle of bucket i, in nanoseconds.
func histMid(i int) float64 {
	if i < 1<<histSub {
		return float64(i)
	}
	e := i>>histSub + histSub
	m := uint64(i&(1<<histSub-1)) + 1<<histSub
	lo := float64(m << (e - histSub - 1))
	return lo + float64(uint64(1)<<(e-histSub-1))/2
}

// snapshot copies the counts into s.
func (h *latencyHist) snapshot(s *[histBuckets]uint64) {
	for i := range h {
		s[i] = h[i].Load()
	}
}

// percentiles returns the p50 and p99 of the latencies counted between
// prev and now, in milliseconds; nil when there are none.
func percentiles(prev, now *[histBuckets]uint64) (p50, p99 *float64) {
	var total uint64
	for i := range now {
		total += now[i] - prev[i]
	}
	if total == 0 {
		return nil, nil
	}
	at := func(q float64) *float64 {
		rank := uint64(math.Ceil(q * float64(total)))
		var seen uint64
		for i := range now {
			if seen += now[i] - prev[i]; seen >= rank {
				ms := histMid(i) / 1e6
				return &ms
			}
		}
		return nil
	}
	return at(0.50), at(0.99)
}
