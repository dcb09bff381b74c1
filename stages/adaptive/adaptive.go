package adaptive

import (
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// Adaptive is a running adaptive concurrency limit stage: a troupe.Service
// and a troupe.Closer. It is safe for concurrent use; its accessors may be
// called from any goroutine.
//
// Its Stats report the max as Capacity, and count as Used the slots above
// the current limit that the stage holds back, so that Capacity - Used is
// what callers can still reserve (see Available); Detail is a Snapshot.
type Adaptive[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	b *behavior[Req, Res]
}

// Snapshot is an adaptive limit's state at one moment: its Stats' Detail.
// A plain value, safe for concurrent use.
type Snapshot struct {
	// Limit is the current limit: at most that many calls are admitted
	// below the stage at once.
	Limit int
	// Min and Max bound the limit.
	Min, Max int
	// InFlight counts the calls handed on whose outcome has not come back.
	InFlight int
	// Baseline is the latency of the service inside without a queue, as
	// measured (0 until the first probe window closes).
	Baseline time.Duration
	// Latency is the mean latency of the last window.
	Latency time.Duration
	// Probing reports a probe window: the limit is at the min while the
	// baseline is measured.
	Probing bool
	// Cuts counts the drops that cut the limit.
	Cuts uint64
}

// New spawns an adaptive concurrency limit over inner, in host h (nil
// means the default system). A bad option is a *troupe.ConfigError
// (matching troupe.ErrBadConfig) naming the option, as is a nil inner
// service.
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], opts ...Option) (*Adaptive[Req, Res], error) {
	c, err := configure(opts)
	if err != nil {
		return nil, err
	}
	b := newBehavior[Req, Res](c)
	st, err := stagekit.Spawn[Req, Res](h, stagekit.Config{Name: "adaptive", Capacity: c.max, CallerPath: true}, inner, b)
	if err != nil {
		return nil, fmt.Errorf("adaptive: %w", err)
	}
	if host, err := stagekit.HostFrom(h); err == nil { // Spawn took h
		b.log = host.System().Logger()
	}
	b.attach(st, c.max)
	a := &Adaptive[Req, Res]{b: b}
	a.Handle = stagekit.NewHandle(st, nil)
	return a, nil
}

// Layer returns a layer that puts an adaptive concurrency limit over the
// service inside it.
func Layer[Req, Res any](opts ...Option) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New(h, inner, opts...)
	})
}

// Limit returns the current limit.
func (a *Adaptive[Req, Res]) Limit() int { return int(a.b.gate.Load()) }

// Available reports how many permits callers can still reserve: the
// current limit minus those reserved and those whose outcome is not yet
// delivered (more, for a moment, just after a decrease, until the calls
// admitted before it end).
func (a *Adaptive[Req, Res]) Available() int {
	s := a.Stats()
	return s.Capacity - s.Used
}

// Snapshot returns the stage's state.
func (a *Adaptive[Req, Res]) Snapshot() Snapshot { return a.b.snapshot() }

// Detail is the stage's Stats' Detail: a Snapshot (stagekit.Detailer).
func (b *behavior[Req, Res]) Detail() any { return b.snapshot() }

func (b *behavior[Req, Res]) snapshot() Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := &b.lim
	return Snapshot{Limit: l.gate, Min: l.min, Max: l.max, InFlight: l.inflight, Baseline: l.base, Latency: l.last, Probing: l.probing, Cuts: l.cuts}
}
