package differential

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/supervisor"
)

// errRefused is a Reconnect's failed dial.
var errRefused = errors.New("connection refused")

// reconnect builds layer l, a Reconnect, over the downstream lf: in a host
// of its own whose supervisor restarts the connection actor after an
// exact, doubling backoff from l.d, with a connector that dials as the
// script says and hands over the downstream.
func (h *realStacks) reconnect(l layer, lf mleaf) (troupe.Service[int, int], error) {
	delays, err := backoff.New(l.d, maxBackoff)
	if err != nil {
		return nil, err
	}
	strategy, err := supervisor.NewBackoff(delays, 10, time.Minute)
	if err != nil {
		return nil, err
	}
	h.hosts++
	host, err := h.sys.NewHost(fmt.Sprintf("reconnect-%d", h.hosts), strategy)
	if err != nil {
		return nil, err
	}
	h.closers = append(h.closers, host)
	leaf := h.leaf(lf)
	var mu sync.Mutex
	dials, made := 0, 0
	dial := func(ctx context.Context, _ string) (troupe.Service[int, int], error) {
		mu.Lock()
		n := dials
		dials++
		mu.Unlock()
		h.note(call{id: -1, n: n, at: time.Since(h.t0), ep: lf.path + "dial"})
		st := l.dial(n)
		// It leaves at once when ctx ends (the Reconnect closes): closing
		// does not wait for a dial.
		tm := time.NewTimer(st.lat)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if st.fail {
			return nil, errRefused
		}
		mu.Lock()
		life := l.life(made)
		made++
		mu.Unlock()
		if life == 0 {
			return leaf, nil
		}
		return &breaking{FuncService: leaf, at: time.Now().Add(life)}, nil
	}
	rc, err := reconnect.New(host, reconnect.Dialer(dial), "downstream", reconnect.Capacity(l.n))
	if err != nil {
		return nil, err
	}
	h.closers = append(h.closers, rc)
	h.recs = append(h.recs, rc)
	return rc, nil
}

// errBroken is a connection's readiness error once it broke.
var errBroken = errors.New("the connection broke")

// breaking is a connection that breaks at a given time: from then on its
// readiness is an error.
type breaking struct {
	*actors.FuncService[int, int]
	at time.Time
}

func (b *breaking) ActorsInner() stagekit.Inner[int, int] {
	return breakingInner{Inner: b.FuncService.ActorsInner(), at: b.at}
}

type breakingInner struct {
	stagekit.Inner[int, int]
	at time.Time
}

func (b breakingInner) TryReserve() (bool, error) {
	if !time.Now().Before(b.at) {
		return false, errBroken
	}
	return b.Inner.TryReserve()
}

func (b breakingInner) ReserveAsync(w *stagekit.Waiter) (bool, error) {
	if !time.Now().Before(b.at) {
		return false, errBroken
	}
	return b.Inner.ReserveAsync(w)
}

// connecting reports whether a Reconnect waits for a connection: a dial
// asked for still comes (after the backoff) or is under way, and the model,
// which runs until nothing is left to happen, sees it.
func (h *realStacks) connecting() bool {
	for _, rc := range h.recs {
		if rc.State() == reconnect.Connecting {
			return true
		}
	}
	return false
}
