package actors

import (
	"context"
	"sync"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/mailbox"
)

// adapter gives the Inner protocol to a troupe.Service that only has a
// blocking Reserve: waiting for its readiness runs on a goroutine of its own
// (never on the stage actor), and the call runs on the caller's goroutine
// with the permit that goroutine won.
type adapter[Req, Res any] struct {
	svc troupe.Service[Req, Res]

	mu      sync.Mutex
	ready   []*troupe.Permit[Req, Res]             // won in the background, not yet spent; guarded by mu
	claimed int                                    // units of ready promised to a reserver; guarded by mu
	waits   map[*mailbox.Waiter]context.CancelFunc // background reservations; guarded by mu
}

// Adapt returns an Inner for svc. Each ReserveAsync that cannot be granted at
// once starts one goroutine that calls svc.Reserve and ends when it returns
// or the wait is cancelled.
func Adapt[Req, Res any](svc troupe.Service[Req, Res]) Inner[Req, Res] {
	return &adapter[Req, Res]{svc: svc, waits: map[*mailbox.Waiter]context.CancelFunc{}}
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

func (a *adapter[Req, Res]) ReserveAsync(w *mailbox.Waiter) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.claimLocked() {
		return true, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.waits[w] = cancel
	go a.reserve(ctx, w)
	return false, nil
}

func (a *adapter[Req, Res]) reserve(ctx context.Context, w *mailbox.Waiter) {
	p, err := a.svc.Reserve(ctx)
	a.mu.Lock()
	cancel, mine := a.waits[w]
	delete(a.waits, w)
	if mine && err == nil {
		a.ready = append(a.ready, p)
		a.claimed++ // promised to w
	}
	a.mu.Unlock()
	if !mine { // cancelled: give back what came anyway
		if err == nil {
			_ = p.Release()
		}
		return
	}
	cancel()
	w.Notify(err)
}

func (a *adapter[Req, Res]) CancelWait(w *mailbox.Waiter) bool {
	a.mu.Lock()
	cancel, ok := a.waits[w]
	delete(a.waits, w)
	a.mu.Unlock()
	if ok {
		cancel()
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
		_ = p.Release()
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

func (p *permitLeaf[Req, Res]) Call(ctx context.Context, req Req) (Res, error) {
	return (*troupe.Permit[Req, Res])(p).Call(ctx, req)
}
