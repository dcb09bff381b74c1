package redisquota

import (
	"fmt"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// SharedLimit is a running stage that holds a lease of a Budget for each
// call it lets through, from before the call is handed on until its
// outcome: at most the budget's size of calls at once below every such
// stage of every process that shares the budget. It is a troupe.Service
// and a troupe.Closer, safe for concurrent use.
//
// The stage takes one request at a time from its mailbox and waits for
// its lease on a goroutine of its own (Budget.Acquire, with the request's
// context), never on its actor; the requests behind it wait in its bounded
// mailbox, in order. A call whose lease cannot be had (Redis unavailable,
// failing closed) is answered with an error matching ErrUnavailable; one
// whose caller gives up meanwhile, with its context's error. The lease is
// released with the outcome, on a goroutine of its own; closing the stage
// waits for those releases.
type SharedLimit[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	b *limitBehavior[Req, Res]
}

// NewLimit spawns a SharedLimit stage over inner with budget b, in host h
// (nil is an error). A nil budget or inner service is an
// error matching troupe.ErrBadConfig.
func NewLimit[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], b *Budget) (*SharedLimit[Req, Res], error) {
	if b == nil {
		return nil, bad("Budget", nil, "nil")
	}
	beh := &limitBehavior[Req, Res]{budget: b}
	st, err := stagekit.Spawn[Req, Res](h, stagekit.Config{Name: "sharedlimit"}, inner, beh)
	if err != nil {
		return nil, fmt.Errorf("sharedlimit: %w", err)
	}
	beh.st = st
	sl := &SharedLimit[Req, Res]{b: beh}
	sl.Handle = stagekit.NewHandle(st, nil)
	return sl, nil
}

// Layer returns a layer that puts a SharedLimit stage with budget b over
// the service inside it: stages.Stack[Req, Res]().Layer(redisquota.Layer[Req, Res](b)).
func Layer[Req, Res any](b *Budget) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return NewLimit(h, inner, b)
	})
}

// Budget returns the stage's budget.
func (s *SharedLimit[Req, Res]) Budget() *Budget { return s.b.budget }

// LimitSnapshot is a SharedLimit stage's state at one moment, for
// observation (its Stats' Detail). A plain value, safe for concurrent use.
type LimitSnapshot struct {
	Held      int   // leases this stage holds now (calls in flight below it)
	Releasing int   // leases being released now
	Lost      int64 // the budget's leases that expired while their calls ran
	Budget    Stats // the budget's own: round trips, failures, outages, background releases
}

// Snapshot returns the stage's state now.
func (s *SharedLimit[Req, Res]) Snapshot() LimitSnapshot { return s.b.snapshot() }

func (b *limitBehavior[Req, Res]) snapshot() LimitSnapshot {
	return LimitSnapshot{
		Held:      int(b.held.Load()),
		Releasing: int(b.releasing.Load()),
		Lost:      b.budget.Lost(),
		Budget:    b.budget.Stats(),
	}
}

// Detail is the stage's Stats' Detail: a LimitSnapshot (stagekit.Detailer).
func (b *limitBehavior[Req, Res]) Detail() any { return b.snapshot() }
