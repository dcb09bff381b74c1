package stagekit

import (
	"context"
	"fmt"

	"github.com/troupe-go/troupe"
)

// Handle is the side of a stage its users see: Reserve, ReserveAndCall
// (what troupe.Do uses), Close, Name and Stats, and nothing of the runtime.
// Stage packages embed a Handle in their stage types; the stage outside
// finds the stage's Inner side through it (AsInner), by a method users
// cannot call. A Handle is safe for concurrent use.
type Handle[Req, Res any] struct {
	s *Stage[Req, Res] // one word: an idle pipeline is mostly its stages' bytes
}

// NewHandle returns the user side of stage s, for a stage package to embed
// in its stage type. in, when not nil, is the Inner side the stage outside
// uses instead of the stage's own (a LoadShed's, which never waits). The
// stage's own counters in Stats' Detail come from its behavior, when it is
// a Detailer.
func NewHandle[Req, Res any](s *Stage[Req, Res], in Inner[Req, Res]) Handle[Req, Res] {
	if in != nil {
		s.outerIn = &outerInner[Req, Res]{in} // the Stage keeps it: a Handle stays one word
	}
	return Handle[Req, Res]{s: s}
}

// Detailer is implemented by behaviors that have counters of their own:
// Detail returns a snapshot of them, a plain value, for the stage's Stats
// (troupe.Stats.Detail). It runs on the goroutine that asked for the
// stats, any number at once: it must be safe for concurrent use.
type Detailer interface {
	Detail() any
}

// outerInner is the Inner side a stage gives the stage outside instead of
// its own (NewHandle's in).
type outerInner[Req, Res any] struct{ Inner[Req, Res] }

// Reserve waits for a free slot and returns a permit for it. It honours
// ctx: a free slot is taken even when ctx is already done (as
// x/sync/semaphore's Acquire may), otherwise Reserve waits until ctx ends
// and returns its error, holding nothing. Once the stage is closed it
// returns a *troupe.ClosedError.
func (h Handle[Req, Res]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	return h.s.Reserve(ctx)
}

// TryReserve returns a permit for a free slot, or, at once when none is
// free, an error matching troupe.ErrFull: it never waits (failsafe-go's
// TryAcquirePermit). Once the stage is closed it returns a
// *troupe.ClosedError.
func (h Handle[Req, Res]) TryReserve() (*troupe.Permit[Req, Res], error) {
	ok, err := h.s.mb.TryReserve()
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, errFull
	}
	return h.s.Permit(), nil
}

// errFull is a TryReserve's error when no slot is free.
var errFull = fmt.Errorf("%w: no slot is free", troupe.ErrFull)

// ReserveAndCall reserves a slot and sends req with it in one step (what
// troupe.Do does): a request that must wait for a slot waits in the stage's
// line and is sent by whoever frees one.
func (h Handle[Req, Res]) ReserveAndCall(ctx context.Context, req Req) (Res, error) {
	return h.s.ReserveAndCall(ctx, req)
}

// Close stops the stage: see Stage.Close for what it answers and returns.
func (h Handle[Req, Res]) Close(ctx context.Context) error { return h.s.Close(ctx) }

// Name returns the stage's name: its kind, or the name the stack gave it.
func (h Handle[Req, Res]) Name() string { return h.s.Name() }

// Stats returns a snapshot of the stage's slots and, where the stage has
// them, its own counters (Detail).
func (h Handle[Req, Res]) Stats() troupe.Stats {
	st := h.s.mb.Stats()
	out := troupe.Stats{Name: h.s.Name(), Capacity: st.Capacity, Used: st.Used, Queued: st.Queued, Waiting: st.Waiting}
	if d, ok := h.s.beh.(Detailer); ok {
		out.Detail = d.Detail()
	}
	return out
}

// actorsInner is how AsInner finds the Inner side of a stage type that
// embeds a Handle; users cannot call it.
func (h Handle[Req, Res]) actorsInner() Inner[Req, Res] {
	if o := h.s.outerIn; o != nil {
		return o.Inner
	}
	return (*stageInner[Req, Res])(h.s)
}

// handled is a stage type that embeds a Handle.
type handled[Req, Res any] interface {
	actorsInner() Inner[Req, Res]
}
