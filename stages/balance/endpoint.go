package balance

import (
	"context"
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/supervisor"
)

// endpoint is one service of the set, with the balancer's view of it.
type endpoint[K comparable, Req, Res any] struct {
	key     K
	name    string // key formatted, for the observer; "" with none
	svc     troupe.Service[Req, Res]
	owned   bool               // the balancer closes svc once it is drained
	always  bool               // svc is ready whenever asked (see alwaysReady)
	ctx     context.Context    // ends when the endpoint is removed: its watcher's Reserve gives up
	cancel  context.CancelFunc // ends ctx
	wake    chan struct{}      // one token: the watcher reserves once
	done    chan struct{}      // closed when the watcher has returned
	drained chan struct{}      // closed once removed with no call in flight

	// All guarded by the balancer's mu.
	held       *troupe.Permit[Req, Res] // the permit reserved in advance; nil: none
	slot       int                      // index in the ready set; -1: not in it
	trying     int                      // refills trying svc on a caller's goroutine
	removed    bool
	settled    bool          // drained is closed
	pausedTill time.Time     // refused calls: not picked before then
	pauses     int           // consecutive refusals, for the backoff
	timer      *time.Timer   // ends a pause
	failing    bool          // the last call failed, at failedAt
	failedAt   time.Duration // on the balancer's clock
	pending    int           // picked, not yet answered nor released
	est        rtt
	picks      uint64
	errs       uint64 // calls that failed
	reserveErr uint64 // Reserves that failed
}

// Insert adds svc to the set under key; a service already under key is
// removed first (see Remove). The balancer does not own svc: a removed
// endpoint is left open. On a closed balancer, or for a nil svc, Insert
// does nothing and returns false.
func (b *Balancer[K, Req, Res]) Insert(key K, svc troupe.Service[Req, Res]) bool {
	if svc == nil {
		return false
	}
	return b.insert(key, svc, false) != nil
}

// insert adds svc under key and returns its endpoint, or nil on a closed
// balancer; owned: the balancer closes svc once drained (it made it).
func (b *Balancer[K, Req, Res]) insert(key K, svc troupe.Service[Req, Res], owned bool) *endpoint[K, Req, Res] {
	ctx, cancel := context.WithCancel(context.Background())
	ep := &endpoint[K, Req, Res]{
		key: key, svc: svc, owned: owned, always: alwaysReady(svc), ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), done: make(chan struct{}), drained: make(chan struct{}),
		slot: -1, trying: 1, est: rtt{ns: float64(b.cfg.rtt), at: b.clock()},
	}
	if b.obs != nil {
		ep.name = fmt.Sprint(key)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		cancel()
		_ = b.closeOwned(ep)
		return nil
	}
	old := b.eps[key]
	var held *troupe.Permit[Req, Res]
	if old != nil {
		held = b.removeLocked(old)
	}
	b.eps[key] = ep
	b.order = append(b.order, ep)
	b.drains.Add(1) // done when the watcher's gone and ep is drained (and closed)
	b.mu.Unlock()
	if old != nil {
		b.drain(old, held)
	}
	if b.obs != nil {
		b.obs.endpointEvent(troupe.EventEndpointAdded, ep.name, nil)
	}
	go b.watch(ep)
	b.refill(ep)
	return ep
}

// refill reserves on ep again after a pick: on the caller's goroutine when
// ep has a unit free now (a troupe stage takes a free unit even with a
// context already done; a FuncService is always ready), otherwise by ep's
// watcher, which waits for one.
func (b *Balancer[K, Req, Res]) refill(ep *endpoint[K, Req, Res]) {
	p, err := ep.svc.Reserve(ep.nowCtx())
	if err == nil {
		b.deliver(ep, p, true)
		return
	}
	b.mu.Lock()
	ep.trying--
	b.settleLocked(ep)
	b.mu.Unlock()
	ep.watchAgain()
}

// alwaysReady reports whether svc is ready whenever asked: a FuncService,
// or what reserves on one as it is (a stack with no stages over it, a
// supervised pipeline of such a stack). Such a service refuses a context
// already done, so the balancer reserves on it with the endpoint's own.
func alwaysReady[Req, Res any](svc troupe.Service[Req, Res]) bool {
	for {
		switch s := svc.(type) {
		case *actors.FuncService[Req, Res]:
			return true
		case *troupe.Stack[Req, Res]:
			svc = s.Service
		case *supervisor.Pipeline[Req, Res]:
			svc = s.Service
		default:
			return false
		}
	}
}

// nowCtx returns the context to reserve on ep with when the reservation
// must not wait: one already done (a troupe stage takes a free unit even
// so), or ep's own for a service always ready (a FuncService).
func (ep *endpoint[K, Req, Res]) nowCtx() context.Context {
	if ep.always {
		return ep.ctx
	}
	return doneCtx
}

// watchAgain wakes ep's watcher to reserve on ep, waiting as long as it
// takes.
func (ep *endpoint[K, Req, Res]) watchAgain() {
	select {
	case ep.wake <- struct{}{}:
	default:
	}
}

// doneCtx is a context already done: a Reserve with it takes a free unit
// at once or fails.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// watch is ep's watcher: each time it is woken it reserves on ep, waiting
// as long as it takes, and hands the permit to the balancer; a Reserve
// that fails is tried again after the backoff's delay. It returns when ep
// is removed.
func (b *Balancer[K, Req, Res]) watch(ep *endpoint[K, Req, Res]) {
	defer close(ep.done)
	for {
		select {
		case <-ep.wake:
		case <-ep.ctx.Done():
			return
		}
		for n := 0; ; n++ {
			p, err := ep.svc.Reserve(ep.ctx)
			if err == nil {
				b.deliver(ep, p, false)
				break
			}
			if ep.ctx.Err() != nil {
				return
			}
			b.mu.Lock()
			ep.reserveErr++
			b.mu.Unlock()
			if backoff.Wait(ep.ctx, b.cfg.delays.Delay(n)) != nil {
				return
			}
		}
	}
}

// deliver makes p ep's ready permit: ep joins the ready set (or goes to a
// waiting Reserve), unless it is paused (it joins when the pause ends) or
// removed (p is released). inline: p comes from a refill on a caller's
// goroutine.
func (b *Balancer[K, Req, Res]) deliver(ep *endpoint[K, Req, Res], p *troupe.Permit[Req, Res], inline bool) {
	b.mu.Lock()
	if ep.removed {
		b.mu.Unlock()
		_ = p.Release()
		if inline {
			b.mu.Lock()
			ep.trying--
			b.settleLocked(ep)
			b.mu.Unlock()
		}
		return
	}
	if inline {
		ep.trying--
	}
	ep.held = p
	var w *waiter[K, Req, Res]
	var t *ticket[K, Req, Res]
	if !ep.paused() {
		w, t = b.readyLocked(ep)
	}
	b.mu.Unlock()
	b.hand(w, t)
}

// paused reports whether ep is still in a pause (the balancer's mu held);
// it reads the clock only while a pause is set, and clears one that ended.
func (ep *endpoint[K, Req, Res]) paused() bool {
	if ep.pausedTill.IsZero() {
		return false
	}
	if time.Now().Before(ep.pausedTill) {
		return true
	}
	ep.pausedTill = time.Time{}
	return false
}

// pauseLocked keeps ep out of the ready set after it refused a call with
// err (mu held): until err's RetryAfter(now) when it says, otherwise for
// the backoff's next delay.
func (b *Balancer[K, Req, Res]) pauseLocked(ep *endpoint[K, Req, Res], err error, now time.Time) {
	d := b.cfg.delays.Delay(ep.pauses)
	if r := retryAfter(err, now); r > 0 {
		d = r
	}
	ep.pauses++
	ep.pausedTill = now.Add(d)
	b.unreadyLocked(ep)
	if ep.timer == nil {
		ep.timer = time.AfterFunc(d, func() { b.resume(ep) })
	} else {
		ep.timer.Reset(d)
	}
}

// resume ends ep's pause, when it has ended: ep joins the ready set if it
// holds a permit.
func (b *Balancer[K, Req, Res]) resume(ep *endpoint[K, Req, Res]) {
	b.mu.Lock()
	var w *waiter[K, Req, Res]
	var t *ticket[K, Req, Res]
	if !ep.removed && ep.held != nil && !ep.paused() {
		w, t = b.readyLocked(ep)
	}
	b.mu.Unlock()
	b.hand(w, t)
}
