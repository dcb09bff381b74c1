package troupeotel

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/troupe-go/troupe"
)

// The attributes' keys, as the package doc lists them.
const (
	AttrPipeline  = attribute.Key("troupe.pipeline.name")
	AttrStage     = attribute.Key("troupe.stage.name")
	AttrStageKind = attribute.Key("troupe.stage.kind")
	AttrOutcome   = attribute.Key("troupe.outcome")
	AttrReason    = attribute.Key("troupe.reason")
	AttrAttempt   = attribute.Key("troupe.attempt")
	AttrStateFrom = attribute.Key("troupe.state.from")
	AttrStateTo   = attribute.Key("troupe.state.to")
	AttrEndpoint  = attribute.Key("troupe.endpoint")
	AttrChange    = attribute.Key("troupe.endpoint.change")
)

// cache holds each stage's precomputed attribute sets, so that recording
// an event builds none. Safe for concurrent use.
type cache struct {
	m sync.Map // key -> *stageSets; entries are never removed
}

// key names a stage: an event's pipeline, stage and kind.
type key struct{ pipeline, stage, kind string }

// stage returns the sets of the stage an event names, making them on its
// first event.
func (c *cache) stage(pipeline, stage, kind string) *stageSets {
	k := key{pipeline, stage, kind}
	if v, ok := c.m.Load(k); ok {
		return v.(*stageSets)
	}
	v, _ := c.m.LoadOrStore(k, newStageSets(k))
	return v.(*stageSets)
}

// both is one attribute set as the options of a counter and a histogram.
type both struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

// stageSets are one stage's attribute sets as measurement options: the
// stage's own, and with each outcome, reason, attempt, state change.
// Read-only once made, except the lazily filled maps.
type stageSets struct {
	kvs      []attribute.KeyValue // pipeline, stage, kind; read-only
	base     []metric.AddOption
	baseRec  []metric.RecordOption
	baseObs  []metric.ObserveOption
	active   atomic.Int64 // calls accepted and not finished: troupe.active_calls
	accepts  atomic.Bool  // the stage has accepted a call: active is reported
	outcomes [troupe.OutcomePanic + 1]both
	reasons  [troupe.ReasonFiltered + 1][]metric.AddOption
	attempts sync.Map // int -> []metric.AddOption
	picks    sync.Map // endpoint -> []metric.AddOption; entries are never removed
	epChange sync.Map // [2]string{endpoint, change} -> []metric.AddOption; the same

	mu      sync.Mutex
	changes map[[2]string][]metric.AddOption // guarded by mu
}

func newStageSets(k key) *stageSets {
	s := &stageSets{
		kvs:     []attribute.KeyValue{AttrPipeline.String(k.pipeline), AttrStage.String(k.stage), AttrStageKind.String(k.kind)},
		changes: map[[2]string][]metric.AddOption{},
	}
	b := s.with()
	s.base, s.baseRec = b.add, b.rec
	s.baseObs = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(s.kvs...))}
	for o := range s.outcomes {
		s.outcomes[o] = s.with(AttrOutcome.String(troupe.Outcome(o).String()))
	}
	for r := range s.reasons {
		s.reasons[r] = s.with(AttrReason.String(troupe.Reason(r).String())).add
	}
	return s
}

// with returns the stage's attributes and kvs as options.
func (s *stageSets) with(kvs ...attribute.KeyValue) both {
	all := append(append(make([]attribute.KeyValue, 0, len(s.kvs)+len(kvs)), s.kvs...), kvs...)
	opt := metric.WithAttributeSet(attribute.NewSet(all...))
	return both{add: []metric.AddOption{opt}, rec: []metric.RecordOption{opt}}
}

func (s *stageSets) outcome(o troupe.Outcome) both {
	if int(o) < len(s.outcomes) {
		return s.outcomes[o]
	}
	return s.with(AttrOutcome.String(o.String()))
}

func (s *stageSets) reason(r troupe.Reason) []metric.AddOption {
	if int(r) < len(s.reasons) {
		return s.reasons[r]
	}
	return s.with(AttrReason.String(r.String())).add
}

// attempt returns the set with attempt number n, an integer attribute.
func (s *stageSets) attempt(n int) []metric.AddOption {
	return lazy(&s.attempts, n, func() []metric.AddOption { return s.with(AttrAttempt.Int(n)).add })
}

// lazy returns the set m keeps under k, made by mk and kept on first use.
func lazy[K comparable](m *sync.Map, k K, mk func() []metric.AddOption) []metric.AddOption {
	if v, ok := m.Load(k); ok {
		return v.([]metric.AddOption)
	}
	v, _ := m.LoadOrStore(k, mk())
	return v.([]metric.AddOption)
}

// change returns the set of a change from one state to another.
func (s *stageSets) change(from, to string) []metric.AddOption {
	k := [2]string{from, to}
	s.mu.Lock()
	defer s.mu.Unlock()
	opts, ok := s.changes[k]
	if !ok {
		opts = s.with(AttrStateFrom.String(from), AttrStateTo.String(to)).add
		s.changes[k] = opts
	}
	return opts
}

// endpoint returns the set of a balancer's endpoint, a string attribute.
func (s *stageSets) endpoint(ep string) []metric.AddOption {
	return lazy(&s.picks, ep, func() []metric.AddOption { return s.with(AttrEndpoint.String(ep)).add })
}

// endpointChange returns the set of a change to a balancer's endpoint.
func (s *stageSets) endpointChange(ep, change string) []metric.AddOption {
	return lazy(&s.epChange, [2]string{ep, change}, func() []metric.AddOption {
		return s.with(AttrEndpoint.String(ep), AttrChange.String(change)).add
	})
}
