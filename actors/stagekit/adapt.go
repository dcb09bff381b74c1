package stagekit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/troupe-go/troupe"
)

// adapter gives the Inner protocol to a troupe.Service that only has a
// blocking Reserve: waiting for its readiness runs on a goroutine of its own
// (never on the stage actor), and the call runs on the caller's goroutine
// with the permit that goroutine won.
type adapter[Req, Res any] struct {
	svc troupe.Service[Req, Res]
	log *slog.Logger // set before first use, then read-only
	// reserveWhere names the wrapped service's Reserve in a panic; set by
	// Adapt, then read-only.
	reserveWhere string

	mu      sync.Mutex
	ready   []*troupe.Permit[Req, Res] // won in the background, not yet spent; guarded by mu
	claimed int                        // units of ready promised to a reserver; guarded by mu
	waits   map[*Waiter]adaptWait      // background reservations; guarded by mu
	seq     uint64                     // numbers the background reservations; guarded by mu
}

// adaptWait is one background reservation. A stage reuses its Waiter, so a
// wait is known by its number, not by the Waiter: a cancelled wait's
// goroutine that returns after the next wait started must not take it for
// its own.
type adaptWait struct {
	cancel context.CancelFunc
	n      uint64
}

// Adapt returns an Inner for svc. Each ReserveAsync that cannot be granted at
// once starts one goroutine that calls svc.Reserve and ends when it returns
// or the wait is cancelled.
func Adapt[Req, Res any](svc troupe.Service[Req, Res]) Inner[Req, Res] {
	a := &adapter[Req, Res]{svc: svc, log: slog.New(slog.DiscardHandler), waits: map[*Waiter]adaptWait{}}
	a.reserveWhere = "Reserve of " + a.name() // named once: a wait costs no string
	return a
}

func (a *adapter[Req, Res]) TryReserve() (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.claimLocked(), nil
}

func (a *adapter[Req, Res]) claimLocked() bool {
	if len(a.ready) > a.claimed {
		a.claimed++
		return true
	}
	return false
}

func (a *adapter[Req, Res]) ReserveAsync(w *Waiter) (bool, error) {
	return a.ReserveAsyncFor(context.Background(), w)
}

// ReserveAsyncFor is ReserveAsync on behalf of a request whose context is
// rctx (see ReserveAsyncFor): the background Reserve sees rctx's values
// (trace spans, request ids), but not its cancellation or deadline, since
// the unit it wins may serve another request.
func (a *adapter[Req, Res]) ReserveAsyncFor(rctx context.Context, w *Waiter) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.claimLocked() {
		return true, nil
	}
	if rctx.Done() != nil {
		rctx = context.WithoutCancel(rctx) // its values, not its end
	}
	ctx, cancel := context.WithCancel(rctx)
	a.seq++
	a.waits[w] = adaptWait{cancel: cancel, n: a.seq}
	go a.reserve(ctx, w, a.seq)
	return false, nil
}

// reserve runs the wrapped service's Reserve on a goroutine of its own. A
// panic in it is that service's readiness error.
func (a *adapter[Req, Res]) reserve(ctx context.Context, w *Waiter, n uint64) {
	p, err := Guard1(a.reserveWhere, func() (*troupe.Permit[Req, Res], error) { return a.svc.Reserve(ctx) })
	if err == nil && p == nil {
		err = fmt.Errorf("actors: Reserve of %s returned no permit and no error: %w", a.name(), troupe.ErrInvalidPermit)
	}
	a.mu.Lock()
	aw, mine := a.waits[w]
	mine = mine && aw.n == n
	if mine {
		delete(a.waits, w)
	}
	if mine && err == nil {
		a.ready = append(a.ready, p)
		a.claimed++ // promised to w
	}
	a.mu.Unlock()
	if !mine { // cancelled: give back what came anyway
		if err == nil {
			a.release(p)
		}
		return
	}
	aw.cancel()
	w.Notify(err)
}

// release gives back a permit of the wrapped service; a panic in its
// Release is reported, since nobody waits for it.
func (a *adapter[Req, Res]) release(p *troupe.Permit[Req, Res]) {
	if err := Guard("Release of "+a.name(), func() { _ = p.Release() }); err != nil {
		a.log.Error("troupe: a permit's Release panicked", "service", a.name(), "err", err)
	}
}

// name names the wrapped service in errors.
func (a *adapter[Req, Res]) name() string {
	if n, ok := a.svc.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", a.svc)
}

func (a *adapter[Req, Res]) CancelWait(w *Waiter) bool {
	a.mu.Lock()
	aw, ok := a.waits[w]
	delete(a.waits, w)
	a.mu.Unlock()
	if ok {
		aw.cancel()
	}
	return ok
}

// take removes one reserved permit; ready is never empty when a unit was
// reserved (TryReserve or a grant) and not yet spent.
func (a *adapter[Req, Res]) take() *troupe.Permit[Req, Res] {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.ready)
	if n == 0 {
		invariant("adapter: unit spent that was never reserved")
		return nil
	}
	p := a.ready[n-1]
	a.ready[n-1] = nil
	a.ready = a.ready[:n-1]
	a.claimed--
	return p
}

func (a *adapter[Req, Res]) Unreserve() {
	if p := a.take(); p != nil {
		a.release(p)
	}
}

func (a *adapter[Req, Res]) Send(e *Envelope[Req, Res]) {
	p := a.take()
	if p == nil {
		var zero Res
		e.Answer(zero, troupe.ErrInvalidPermit)
		return
	}
	e.HandToCaller((*permitLeaf[Req, Res])(p))
}

// permitLeaf runs a call with a permit won in the background.
type permitLeaf[Req, Res any] troupe.Permit[Req, Res]

// Release gives the permit back unused: its caller no longer waits.
func (p *permitLeaf[Req, Res]) Release() { _ = (*troupe.Permit[Req, Res])(p).Release() }

func (p *permitLeaf[Req, Res]) Call(ctx context.Context, req Req) (Res, error) {
	return (*troupe.Permit[Req, Res])(p).Call(ctx, req)
}
