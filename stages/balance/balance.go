package balance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/internal/opt"
)

// Balancer sends each request to one of a set of endpoints, keyed by K:
// of the endpoints ready, two drawn at random, the less loaded of the two
// (see the package documentation). It is a troupe.Service and a
// troupe.Closer, safe for concurrent use.
type Balancer[K comparable, Req, Res any] struct {
	cfg     config
	permits troupe.PermitSource[Req, Res]
	life    context.Context       // ends when the balancer closes: stops the sources
	stop    context.CancelFunc    // ends life
	sources sync.WaitGroup        // the sources' goroutines
	drains  sync.WaitGroup        // removed endpoints draining, then closing
	abandon chan struct{}         // closed when Close's context ends: drains stop waiting
	epoch   time.Time             // the balancer's clock reads the time since
	failure func(Res, error) bool // Classify's, or nil: an error is a failure
	obs     *reporter             // nil: no observer

	mu      sync.Mutex
	eps     map[K]*endpoint[K, Req, Res] // guarded by mu: the endpoints in the set
	order   []*endpoint[K, Req, Res]     // guarded by mu: the same, in the order they came
	ready   []*endpoint[K, Req, Res]     // guarded by mu: those holding a permit and not paused
	waiters []*waiter[K, Req, Res]       // guarded by mu: Reserves waiting for a ready endpoint, first come first
	rnd     *rand.Rand                   // guarded by mu
	closed  bool                         // guarded by mu
}

// waiter is a Reserve waiting for an endpoint: the first one that becomes
// ready is handed to it on ch, which holds one (nil: the balancer closed).
type waiter[K comparable, Req, Res any] struct {
	ch chan *ticket[K, Req, Res]
}

// New returns a balancer whose endpoints come from src, and from Insert
// and Remove; a nil src means Insert and Remove alone. A nil or bad option
// and a bad source are errors matching troupe.ErrBadConfig. The balancer
// runs a goroutine for its source and one for each endpoint (its watcher)
// until Close.
func New[K comparable, Req, Res any](src Source[K, Req, Res], opts ...Option[Res]) (*Balancer[K, Req, Res], error) {
	c := defaults()
	if err := opt.Apply("balance", &c, opts); err != nil {
		return nil, err
	}
	if c.err != nil {
		return nil, c.err
	}
	if src != nil {
		if err := src.check(); err != nil {
			return nil, err
		}
	}
	failure, _ := c.classify.(func(Res, error) bool) // nil, or Classify[Res]'s
	if c.src == nil {
		c.src = rand.NewPCG(rand.Uint64(), rand.Uint64())
	}
	life, stop := context.WithCancel(context.Background())
	b := &Balancer[K, Req, Res]{
		cfg: c, life: life, stop: stop, abandon: make(chan struct{}), epoch: time.Now(), failure: failure,
		obs: newReporter(c),
		eps: map[K]*endpoint[K, Req, Res]{}, rnd: rand.New(c.src),
	}
	if src != nil {
		b.sources.Go(func() { src.run(life, b) })
	}
	return b, nil
}

// Reserve picks an endpoint and returns a permit holding that endpoint's
// reservation: of the endpoints ready, two drawn at random, the one with
// the lower cost (one that failed within the cooldown loses to one that
// did not). With none ready, or none at all, it waits for the first one to
// become ready; when ctx ends first it returns an error matching both
// ErrNoneReady and ctx's error. An endpoint ready is picked even when ctx
// is already done. On a closed balancer it returns a *troupe.ClosedError.
func (b *Balancer[K, Req, Res]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, closedErr()
	}
	for ep, _ := b.pickLocked(); ep != nil; ep, _ = b.pickLocked() {
		b.countLocked(ep)
		b.mu.Unlock()
		if p := b.permitFor(ep); p != nil {
			if b.obs != nil {
				if err := b.picked(ctx, ep, p); err != nil {
					return nil, err
				}
			}
			return b.permits.Issue(&ticket[K, Req, Res]{b: b, ep: ep, p: p}), nil
		}
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return nil, closedErr()
		}
	}
	w := &waiter[K, Req, Res]{ch: make(chan *ticket[K, Req, Res], 1)}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case t := <-w.ch:
		if t == nil {
			return nil, closedErr()
		}
		if b.obs != nil {
			if err := b.picked(ctx, t.ep, t.p); err != nil {
				return nil, err
			}
		}
		return b.permits.Issue(t), nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	i := slices.Index(b.waiters, w)
	if i >= 0 {
		b.waiters = slices.Delete(b.waiters, i, i+1)
	}
	b.mu.Unlock()
	if i < 0 { // handed an endpoint as ctx ended: give it back
		if t := <-w.ch; t != nil {
			t.Release()
		}
	}
	return nil, fmt.Errorf("%w: %w", ErrNoneReady, ctx.Err())
}

// ReserveAndCall picks an endpoint as Reserve does and sends req to it, in
// one step (troupe.Do uses it): no permit of the balancer's is issued.
func (b *Balancer[K, Req, Res]) ReserveAndCall(ctx context.Context, req Req) (Res, error) {
	b.mu.Lock()
	var ep *endpoint[K, Req, Res]
	now := unread
	if !b.closed {
		ep, now = b.pickLocked()
	}
	if ep != nil {
		b.countLocked(ep)
	}
	b.mu.Unlock()
	var p *troupe.Permit[Req, Res]
	if ep != nil {
		p = b.permitFor(ep)
	}
	if p == nil { // closed, none ready or ep filled up meanwhile: Reserve says so, or waits
		p, err := b.Reserve(ctx)
		if err != nil {
			var zero Res
			return zero, err
		}
		return p.Call(ctx, req)
	}
	if b.obs != nil {
		if err := b.picked(ctx, ep, p); err != nil {
			var zero Res
			return zero, err
		}
	}
	if b.cfg.ewma && now == unread {
		now = b.clock()
	}
	res, err := p.Call(ctx, req)
	v := succeeded
	if err != nil || b.failure != nil {
		v, err = b.judge(ctx, res, err)
	}
	b.finish(ep, v, now, err)
	return res, err
}

// pickLocked returns the endpoint to send to, or nil when none is ready
// (mu held): power of two choices over the ready set. It returns the time
// it read too, or the zero time when the pick needed none (the clock is
// read only for peak-EWMA costs and for an endpoint in a cooldown).
func (b *Balancer[K, Req, Res]) pickLocked() (*endpoint[K, Req, Res], time.Duration) {
	now := unread
	switch n := len(b.ready); n {
	case 0:
		return nil, now
	case 1:
		return b.ready[0], now
	default:
		i := b.rnd.IntN(n)
		j := b.rnd.IntN(n - 1)
		if j >= i {
			j++
		}
		x, y := b.ready[i], b.ready[j]
		if b.cfg.ewma || x.failing || y.failing {
			now = b.clock()
		}
		if b.lessLocked(y, x, now) {
			return y, now
		}
		return x, now
	}
}

// lessLocked reports whether x is to be preferred to y at now (mu held):
// one whose last call failed within the cooldown loses to one that did
// not; otherwise the lower cost wins.
func (b *Balancer[K, Req, Res]) lessLocked(x, y *endpoint[K, Req, Res], now time.Duration) bool {
	if fx, fy := b.failingLocked(x, now), b.failingLocked(y, now); fx != fy {
		return fy
	}
	if !b.cfg.ewma {
		return x.pending < y.pending
	}
	return b.costLocked(x, now, true) < b.costLocked(y, now, true)
}

// failingLocked reports whether ep's last call failed within the cooldown
// (mu held).
func (b *Balancer[K, Req, Res]) failingLocked(ep *endpoint[K, Req, Res], now time.Duration) bool {
	return ep.failing && now-ep.failedAt < b.cfg.cooldown
}

// costLocked returns ep's cost at now (mu held): its calls in flight, or
// its peak-EWMA estimate times one more than those. As tower's does, a
// pick's reading of the estimate decays it (keep); Stats' does not.
func (b *Balancer[K, Req, Res]) costLocked(ep *endpoint[K, Req, Res], now time.Duration, keep bool) float64 {
	if !b.cfg.ewma {
		return float64(ep.pending)
	}
	e := ep.est.decayed(now, b.cfg.decay)
	if keep {
		ep.est = e
	}
	return e.ns * float64(ep.pending+1)
}

// takeLocked hands ep's ready permit to the caller who picked it (mu
// held): ep leaves the ready set, a call is counted in flight, and ep is
// being reserved on again (the caller runs refill).
func (b *Balancer[K, Req, Res]) takeLocked(ep *endpoint[K, Req, Res]) *troupe.Permit[Req, Res] {
	b.unreadyLocked(ep)
	p := ep.held
	ep.held = nil
	ep.trying++
	ep.pending++
	ep.picks++
	return p
}

// countLocked counts a call picked for ep (mu held): in flight until its
// finish.
func (b *Balancer[K, Req, Res]) countLocked(ep *endpoint[K, Req, Res]) {
	ep.pending++
	ep.picks++
}

// permitFor returns a permit on ep for a call picked and counted for it: a
// unit reserved on ep now when it has one free, so that ep keeps its ready
// permit for the next pick; otherwise ep's ready permit, which its watcher
// then replaces. It returns nil, the pick uncounted, when ep has neither
// (another pick took its ready permit meanwhile, or it was removed).
func (b *Balancer[K, Req, Res]) permitFor(ep *endpoint[K, Req, Res]) *troupe.Permit[Req, Res] {
	if p, err := ep.svc.Reserve(ep.nowCtx()); err == nil {
		return p
	}
	b.mu.Lock()
	p := ep.held
	if p == nil {
		ep.pending--
		ep.picks--
		b.settleLocked(ep)
		b.mu.Unlock()
		return nil
	}
	b.unreadyLocked(ep)
	ep.held = nil
	b.mu.Unlock()
	ep.watchAgain()
	return p
}

// readyLocked puts ep, which holds a permit, in the ready set, or hands it
// to the first waiting Reserve (mu held). It returns the waiter's ticket
// for the caller to deliver and refill after unlocking, or nil.
func (b *Balancer[K, Req, Res]) readyLocked(ep *endpoint[K, Req, Res]) (*waiter[K, Req, Res], *ticket[K, Req, Res]) {
	if len(b.waiters) > 0 {
		w := b.waiters[0]
		b.waiters = slices.Delete(b.waiters, 0, 1)
		return w, &ticket[K, Req, Res]{b: b, ep: ep, p: b.takeLocked(ep)}
	}
	if ep.slot < 0 {
		ep.slot = len(b.ready)
		b.ready = append(b.ready, ep)
	}
	return nil, nil
}

// unreadyLocked takes ep out of the ready set, if it is in it (mu held).
func (b *Balancer[K, Req, Res]) unreadyLocked(ep *endpoint[K, Req, Res]) {
	i := ep.slot
	if i < 0 {
		return
	}
	last := len(b.ready) - 1
	b.ready[i] = b.ready[last]
	b.ready[i].slot = i
	b.ready[last] = nil
	b.ready = b.ready[:last]
	ep.slot = -1
}

// hand delivers a ticket readyLocked made for a waiter, and starts
// reserving on its endpoint again.
func (b *Balancer[K, Req, Res]) hand(w *waiter[K, Req, Res], t *ticket[K, Req, Res]) {
	if w == nil {
		return
	}
	w.ch <- t
	b.refill(t.ep)
}
