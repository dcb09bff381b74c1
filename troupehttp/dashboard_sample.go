package troupehttp

import (
	"encoding/json"
	"maps"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/ratelimit"
)

// dashStack is a registered stack and what the sampler keeps of its stages.
type dashStack struct {
	name   string
	src    StatsSource
	stages map[string]*dashStage // by name; a stage gone from the source leaves at the next sample
}

// dashStage is what the sampler keeps of one stage between ticks: the
// cumulative counts of the last sample, and the plotted history.
type dashStage struct {
	at                                          time.Time // of the last sample; zero before the first
	gen                                         uint64    // the sample that last saw the stage
	accepted, rejected, failed, retries, hedges uint64
	picks, errors                               uint64 // a balancer's endpoint's
	latency                                     [histBuckets]uint64
	inFlight                                    []int     // oldest first
	rate                                        []float64 // accepted a second, oldest first
}

// The frame sent on each tick, as JSON. Rates are per second, latencies in
// milliseconds; null where the stage has no such figure (no observer, no
// request finished in the tick, not a stage of that kind).
type dashFrame struct {
	IntervalMs float64          `json:"intervalMs"`
	Stacks     []dashStackFrame `json:"stacks"`
}

type dashStackFrame struct {
	Name     string           `json:"name"`
	Observed bool             `json:"observed"`
	Stages   []dashStageFrame `json:"stages"`
}

type dashStageFrame struct {
	Name      string    `json:"name"`
	Capacity  int       `json:"capacity"`
	Unbounded bool      `json:"unbounded,omitempty"` // a stage of no capacity of its own
	InFlight  int       `json:"inFlight"`
	Queued    int       `json:"queued"`
	Waiting   int       `json:"waiting"`
	Accepted  *float64  `json:"accepted"`
	Rejected  *float64  `json:"rejected"`
	Failed    *float64  `json:"failed"`
	Retries   *float64  `json:"retries"`
	Hedges    *float64  `json:"hedges"`
	P50       *float64  `json:"p50"`
	P99       *float64  `json:"p99"`
	Breaker   string    `json:"breaker,omitempty"`
	Limit     *int      `json:"limit,omitempty"`
	RateLimit string    `json:"rateLimit,omitempty"`
	Endpoint  string    `json:"endpoint,omitempty"` // a balancer's endpoint's state
	Picks     *float64  `json:"picks,omitempty"`
	Errors    *float64  `json:"errors,omitempty"`
	RTTMs     *float64  `json:"rttMs,omitempty"`
	InFlights []int     `json:"seriesInFlight"`
	Rates     []float64 `json:"seriesAccepted"`
}

// sample returns the frame of now: the last one when it is less than half
// a tick old (streams share it), a new one otherwise.
func (d *Dashboard) sample(now time.Time) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.frame != nil && now.Sub(d.last) < d.interval/2 {
		return d.frame
	}
	f := dashFrame{IntervalMs: float64(d.interval) / float64(time.Millisecond), Stacks: make([]dashStackFrame, 0, len(d.stacks))}
	d.gen++
	for _, s := range d.stacks {
		sf := dashStackFrame{Name: s.name, Observed: d.obs.observed(s.name)}
		for _, st := range s.src.Stages() {
			sf.Stages = append(sf.Stages, d.stageFrame(s, st, sf.Observed, now))
		}
		maps.DeleteFunc(s.stages, func(_ string, ds *dashStage) bool { return ds.gen != d.gen }) // a balancer's endpoint removed
		f.Stacks = append(f.Stacks, sf)
	}
	b, err := json.Marshal(f)
	if err != nil { // the frame's types always marshal; say so if not
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	d.frame, d.last = b, now
	return b
}

// stageFrame is one stage's part of the frame at now; it moves the stage's
// kept counts and history on.
func (d *Dashboard) stageFrame(s *dashStack, st troupe.Stats, observed bool, now time.Time) dashStageFrame {
	ds := s.stages[st.Name]
	if ds == nil {
		ds = &dashStage{}
		s.stages[st.Name] = ds
	}
	ds.gen = d.gen
	f := dashStageFrame{Name: st.Name, Capacity: st.Capacity, InFlight: st.Used, Queued: st.Queued, Waiting: st.Waiting}
	f.Unbounded = st.Capacity >= stagekit.MaxCapacity
	var hedges uint64
	isHedge := false
	var ep *balance.Snapshot
	switch v := st.Detail.(type) {
	case balance.Snapshot:
		ep = &v
		f.Endpoint = endpointState(v)
		if v.RTT > 0 {
			ms := float64(v.RTT) / float64(time.Millisecond)
			f.RTTMs = &ms
		}
	case breaker.Snapshot:
		f.Breaker = v.State.String()
	case adaptive.Snapshot:
		f.Limit = &v.Limit
	case ratelimit.Snapshot:
		f.RateLimit = "ready"
		if v.Limited {
			f.RateLimit = "limited"
		}
	case hedge.Counts:
		hedges, isHedge = v.Hedges, true
	}
	var cur dashStage
	if c := d.obs.counters(s.name, st.Name, false); c != nil {
		cur.accepted, cur.rejected, cur.failed, cur.retries = c.accepted.Load(), c.rejected.Load(), c.failed.Load(), c.retries.Load()
		c.latency.snapshot(&cur.latency)
	}
	// Rates need the last sample, and one recent enough: after a pause
	// with no stream open, the next sample only starts the count again.
	elapsed := now.Sub(ds.at)
	if !ds.at.IsZero() && elapsed > 0 && elapsed <= 3*d.interval {
		per := elapsed.Seconds()
		rate := func(now, before uint64) *float64 {
			r := float64(now-before) / per
			return &r
		}
		if isHedge {
			f.Hedges = rate(hedges, ds.hedges)
		}
		if ep != nil {
			f.Picks, f.Errors = rate(ep.Picks, ds.picks), rate(ep.Errors, ds.errors)
		}
		if observed {
			f.Accepted = rate(cur.accepted, ds.accepted)
			f.Rejected = rate(cur.rejected, ds.rejected)
			f.Failed = rate(cur.failed, ds.failed)
			f.Retries = rate(cur.retries, ds.retries)
			f.P50, f.P99 = percentiles(&ds.latency, &cur.latency)
		}
	}
	ds.at, ds.hedges = now, hedges
	if ep != nil {
		ds.picks, ds.errors = ep.Picks, ep.Errors
	}
	ds.accepted, ds.rejected, ds.failed, ds.retries = cur.accepted, cur.rejected, cur.failed, cur.retries
	ds.latency = cur.latency
	ds.inFlight = keepLast(append(ds.inFlight, st.Used), d.history)
	accepted := 0.0
	if f.Accepted != nil {
		accepted = *f.Accepted
	} else if f.Picks != nil {
		accepted = *f.Picks // an endpoint's plot: picks a second
	}
	ds.rate = keepLast(append(ds.rate, accepted), d.history)
	f.InFlights, f.Rates = ds.inFlight, ds.rate
	return f
}

// endpointState names a balancer's endpoint's state: "paused" (it refused
// a call), "failing" (its last call failed, in the cooldown), "ready" (the
// balancer may pick it), or "busy" (it is being reserved on: its limit
// full, say).
func endpointState(s balance.Snapshot) string {
	switch {
	case s.Paused:
		return "paused"
	case s.Failing:
		return "failing"
	case s.Ready:
		return "ready"
	}
	return "busy"
}

// keepLast returns the last n elements of s, reusing its array.
func keepLast[T any](s []T, n int) []T {
	if len(s) <= n {
		return s
	}
	return append(s[:0], s[len(s)-n:]...)
}
