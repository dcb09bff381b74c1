package balance

import (
	"context"
	"errors"
	"time"

	"github.com/troupe-go/troupe"
)

// ticket is the Reservation behind a permit the balancer issued: the
// endpoint picked and the permit reserved on it. Each ticket backs one
// permit, which calls or releases it once.
type ticket[K comparable, Req, Res any] struct {
	b  *Balancer[K, Req, Res]
	ep *endpoint[K, Req, Res]
	p  *troupe.Permit[Req, Res]
}

// Call sends req with the endpoint's permit and records the round trip
// and its outcome in the endpoint's load.
func (t *ticket[K, Req, Res]) Call(ctx context.Context, req Req) (Res, error) {
	start := unread
	if t.b.cfg.ewma {
		start = t.b.clock()
	}
	res, err := t.p.Call(ctx, req)
	t.b.finish(t.ep, ctx, start, err)
	return res, err
}

// Release gives the endpoint's permit back, unused.
func (t *ticket[K, Req, Res]) Release() {
	_ = t.p.Release()
	t.b.finish(t.ep, nil, unread, nil)
}

// finish ends a pick: the call is no longer in flight and, when it was
// made (ctx not nil), its round trip counts towards the cost and its
// failure against the endpoint; a call whose own caller gave up counts
// for neither, and a refusal (see Refused) pauses the endpoint.
func (b *Balancer[K, Req, Res]) finish(ep *endpoint[K, Req, Res], ctx context.Context, start time.Duration, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ep.pending--
	defer b.settleLocked(ep)
	if ctx == nil || (err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err())) {
		return
	}
	if err == nil && !b.cfg.ewma {
		ep.failing, ep.pauses = false, 0
		return
	}
	now := b.clock()
	if b.cfg.ewma {
		ep.est = ep.est.observe(now-start, now, b.cfg.decay)
	}
	if err == nil {
		ep.failing, ep.pauses = false, 0
		return
	}
	ep.errs++
	ep.failing, ep.failedAt = true, now
	if b.cfg.refused(err) && !ep.removed {
		b.pauseLocked(ep, err, time.Now())
	}
}

// retryAfter returns how long after now err says the endpoint refuses
// calls (a *breaker.OpenError says), or 0.
func retryAfter(err error, now time.Time) time.Duration {
	var ra interface{ RetryAfter(time.Time) time.Duration }
	if errors.As(err, &ra) {
		return ra.RetryAfter(now)
	}
	return 0
}
