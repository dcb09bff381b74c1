package balance

import (
	"context"
	"errors"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
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
	v := succeeded
	if err != nil || t.b.failure != nil {
		v, err = t.b.judge(ctx, res, err)
	}
	t.b.finish(t.ep, v, start, err)
	return res, err
}

// Release gives the endpoint's permit back, unused.
func (t *ticket[K, Req, Res]) Release() {
	_ = t.p.Release()
	t.b.finish(t.ep, released, unread, nil)
}

// verdict is what the end of a pick says of its endpoint.
type verdict uint8

const (
	released  verdict = iota // the permit was given back unused
	gaveUp                   // the caller's context ended and the outcome is its error
	succeeded                // the call was made and did not fail
	failed                   // the call was made and failed (see Classify)
)

// judge returns what a call's outcome says of its endpoint, and the error
// the caller gets: err, or a panic in Classify's function with err. Its
// callers skip it for a success with no Classify, the common case.
func (b *Balancer[K, Req, Res]) judge(ctx context.Context, res Res, err error) (verdict, error) {
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			return gaveUp, err
		}
	}
	if b.failure == nil {
		if err != nil {
			return failed, err
		}
		return succeeded, nil
	}
	bad, perr := stagekit.Guard1("balance: Classify", func() (bool, error) { return b.failure(res, err), nil })
	if perr != nil {
		return failed, stagekit.JoinPanic(perr, err)
	}
	if bad {
		return failed, err
	}
	return succeeded, err
}

// finish ends a pick: the call is no longer in flight and, when it was
// made (not released, nor given up by its caller), its round trip counts
// towards the cost and a failure against the endpoint; an error that is
// a refusal (see Refused) pauses the endpoint.
func (b *Balancer[K, Req, Res]) finish(ep *endpoint[K, Req, Res], v verdict, start time.Duration, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ep.pending--
	defer b.settleLocked(ep)
	if v == released || v == gaveUp {
		return
	}
	if v == succeeded && !b.cfg.ewma && err == nil {
		ep.failing, ep.pauses = false, 0
		return
	}
	now := b.clock()
	if b.cfg.ewma {
		ep.est = ep.est.observe(now-start, now, b.cfg.decay)
	}
	if v == failed {
		ep.errs++
		ep.failing, ep.failedAt = true, now
	} else {
		ep.failing = false
	}
	if err != nil && b.cfg.refused(err) && !ep.removed {
		b.pauseLocked(ep, err, time.Now())
	} else if err == nil {
		ep.pauses = 0
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
