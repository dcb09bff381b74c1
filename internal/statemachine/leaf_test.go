package statemachine

import (
	"context"
	"sync/atomic"

	"github.com/troupe-go/troupe"
)

// plainLeaf is a plain troupe.Service, with no stagekit.Inner side: the stage
// over it waits for its readiness on goroutines of their own (stagekit.Adapt).
// Its readiness is a semaphore of a few units, and its Reserve, user code,
// can be made to panic.
type plainLeaf struct {
	w         *world
	sem       chan struct{}
	panicNext atomic.Bool
	permits   troupe.PermitSource[req, int]
}

func newPlainLeaf(w *world, units int) *plainLeaf {
	return &plainLeaf{w: w, sem: make(chan struct{}, units)}
}

// Reserve takes a unit, waiting for one until ctx ends.
func (p *plainLeaf) Reserve(ctx context.Context) (*troupe.Permit[req, int], error) {
	if p.panicNext.CompareAndSwap(true, false) {
		panic("statemachine: the plain service's Reserve panics")
	}
	select {
	case p.sem <- struct{}{}:
		return p.permits.Issue(p), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Call serves the request and gives the unit back (troupe.Reservation).
func (p *plainLeaf) Call(ctx context.Context, r req) (int, error) {
	defer func() { <-p.sem }()
	return p.w.serve(ctx, r)
}

// Release gives the unit back (troupe.Reservation).
func (p *plainLeaf) Release() { <-p.sem }

// used reports the units taken.
func (p *plainLeaf) used() int { return len(p.sem) }
