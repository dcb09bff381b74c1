package balance

import (
	"context"
	"slices"

	"github.com/troupe-go/troupe"
)

// Remove takes key's endpoint out of the set: it is picked no more, its
// ready permit is given back, its calls in flight finish, and then, if
// the balancer made it (a Poll's build, a Change marked Owned), it is
// closed. It reports whether key had an endpoint.
func (b *Balancer[K, Req, Res]) Remove(key K) bool {
	b.mu.Lock()
	ep := b.eps[key]
	var held *troupe.Permit[Req, Res]
	if ep != nil {
		held = b.removeLocked(ep)
	}
	b.mu.Unlock()
	if ep != nil {
		b.drain(ep, held)
	}
	return ep != nil
}

// removeLocked takes ep out of the set and returns its ready permit, for
// drain to release (mu held).
func (b *Balancer[K, Req, Res]) removeLocked(ep *endpoint[K, Req, Res]) *troupe.Permit[Req, Res] {
	ep.removed = true
	delete(b.eps, ep.key)
	if i := slices.Index(b.order, ep); i >= 0 {
		b.order = slices.Delete(b.order, i, i+1)
	}
	b.unreadyLocked(ep)
	held := ep.held
	ep.held = nil
	ep.cancel()
	if ep.timer != nil {
		ep.timer.Stop()
	}
	b.settleLocked(ep)
	return held
}

// settleLocked closes ep's drained once it is removed and nothing of the
// balancer's uses it any more: no call in flight, no refill under way (mu
// held).
func (b *Balancer[K, Req, Res]) settleLocked(ep *endpoint[K, Req, Res]) {
	if ep.removed && !ep.settled && ep.pending == 0 && ep.trying == 0 {
		ep.settled = true
		close(ep.drained)
	}
}

// drain releases a removed endpoint's ready permit and, on a goroutine the
// balancer's Close waits for, closes the endpoint once its watcher has
// returned and its calls in flight have finished (or Close gave up
// waiting). The observer is told of the removal, and then of the drain.
func (b *Balancer[K, Req, Res]) drain(ep *endpoint[K, Req, Res], held *troupe.Permit[Req, Res]) {
	if held != nil {
		_ = held.Release()
	}
	if b.obs != nil {
		b.obs.endpointEvent(troupe.EventEndpointRemoved, ep.name, nil)
	}
	go func() {
		defer b.drains.Done()
		<-ep.done
		select {
		case <-ep.drained:
		case <-b.abandon:
		}
		err := b.closeOwned(ep)
		if b.obs != nil {
			b.obs.endpointEvent(troupe.EventEndpointDrained, ep.name, err)
		}
	}()
}

// closeOwned closes ep's service when the balancer owns it, and returns
// the close's error; once Close gave up waiting, with a context already
// done, so that what it still runs is told to stop.
func (b *Balancer[K, Req, Res]) closeOwned(ep *endpoint[K, Req, Res]) error {
	c, ok := ep.svc.(troupe.Closer)
	if !ep.owned || !ok {
		return nil
	}
	ctx := context.Background()
	select {
	case <-b.abandon:
		ctx = doneCtx
	default:
	}
	return c.Close(ctx)
}
