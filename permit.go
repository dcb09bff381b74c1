package troupe

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"
)

// Permit is one reserved unit of a service's readiness. It is used exactly
// once: Call sends a request with it, Release gives the capacity back unused.
// A second Call or Release, or a Call after Release, returns ErrPermitUsed and
// never reaches the service.
//
// A Permit dropped without Call or Release does not leak capacity forever:
// once the garbage collector finds it unreachable, the capacity is released
// and the mistake is logged (see [PermitSource]).
//
// Permits are issued by services through a PermitSource; the zero Permit is
// invalid. A Permit is safe for concurrent use: concurrent Calls race and
// exactly one wins.
type Permit[Req, Res any] struct {
	led *ledger[Req, Res] // set when the slab is made, never changed
	i   int32             // index into led, set when the slab is made
}

// Call sends req using the permit's capacity and returns the outcome. It
// honours ctx as the issuing service documents.
func (p *Permit[Req, Res]) Call(ctx context.Context, req Req) (Res, error) {
	r, err := p.take()
	if err != nil {
		var zero Res
		return zero, err
	}
	return r.Call(ctx, req)
}

// Release gives the permit's capacity back at once, unused. It
// returns ErrPermitUsed when the permit was already used or released.
func (p *Permit[Req, Res]) Release() error {
	r, err := p.take()
	if err != nil {
		return err
	}
	r.Release()
	return nil
}

// take marks the permit spent and hands over its reservation, once.
func (p *Permit[Req, Res]) take() (Reservation[Req, Res], error) {
	if p == nil || p.led == nil {
		return nil, ErrInvalidPermit
	}
	if !p.led.state[p.i].CompareAndSwap(permitIssued, permitSpent) {
		return nil, ErrPermitUsed
	}
	r := p.led.owner[p.i]
	p.led.owner[p.i] = nil // owned by the winner of the CompareAndSwap above
	return r, nil
}

const slabSize = 64

// Permit states, one per ledger entry.
const (
	permitUnissued uint32 = iota // not yet handed out by the source
	permitIssued                 // handed out, neither called nor released
	permitSpent                  // called, released, or reclaimed
)

// ledger holds the state of one slab's permits. It is kept apart from the
// slab so the slab's cleanup can reach it after the slab itself is gone.
type ledger[Req, Res any] struct {
	state [slabSize]atomic.Uint32
	// owner[i] is written by Issue before the permit is handed out and read
	// by the single winner of state[i]'s CompareAndSwap.
	owner [slabSize]Reservation[Req, Res]
}

// slab is a block of permits handed out in order. A user's *Permit points
// into it, which keeps the whole slab alive; when every permit of a slab is
// unreachable its cleanup reclaims those never called nor released.
type slab[Req, Res any] struct {
	next    atomic.Int32
	permits [slabSize]Permit[Req, Res]
	led     *ledger[Req, Res]
}

// PermitSource issues the Permits of one or more services. The zero value is
// ready to use; it must not be copied after first use. It is safe for
// concurrent use.
//
// Permits are carved from slabs of 64 with one garbage-collection cleanup
// per slab (a cleanup per permit costs more than the rest of a stage hop:
// see docs/decisions.md), and the source holds its current slab only
// weakly: a dropped permit is reclaimed once it and the other permits of its
// slab are unreachable, even when no more permits are issued.
type PermitSource[Req, Res any] struct {
	cur  atomic.Pointer[weak.Pointer[slab[Req, Res]]]
	mu   sync.Mutex      // serialises making a new slab; guards made
	made *made[Req, Res] // the slabs made, for Outstanding; nil before the first
}

// made lists a source's slabs, weakly (a slab goes when its permits are
// unreachable, listed or not), for Outstanding to scan.
type made[Req, Res any] struct {
	slabs []weak.Pointer[slab[Req, Res]]
	kept  int // len(slabs) after the last compaction
}

// Issue returns a fresh Permit whose Call and Release are forwarded to r.
func (s *PermitSource[Req, Res]) Issue(r Reservation[Req, Res]) *Permit[Req, Res] {
	for {
		if w := s.cur.Load(); w != nil {
			if sl := w.Value(); sl != nil {
				if i := sl.next.Add(1) - 1; i < slabSize {
					sl.led.owner[i] = r
					sl.led.state[i].Store(permitIssued)
					return &sl.permits[i]
				}
			}
		}
		s.refill()
	}
}

// refill installs a new slab unless another goroutine already did.
func (s *PermitSource[Req, Res]) refill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.cur.Load(); w != nil {
		if sl := w.Value(); sl != nil && sl.next.Load() < slabSize {
			return
		}
	}
	led := &ledger[Req, Res]{}
	sl := &slab[Req, Res]{led: led}
	for i := range sl.permits {
		sl.permits[i] = Permit[Req, Res]{led: led, i: int32(i)}
	}
	runtime.AddCleanup(sl, reclaim[Req, Res], led)
	w := weak.Make(sl)
	if s.made == nil {
		s.made = &made[Req, Res]{}
	}
	s.made.slabs = append(s.made.slabs, w)
	if len(s.made.slabs) >= 2*max(s.made.kept, 8) {
		s.made.compact() // the list stays within twice the slabs still alive
	}
	s.cur.Store(&w)
}

// compact drops the slabs the collector took; it reports whether one still
// alive holds a permit issued and neither called, released nor reclaimed.
func (m *made[Req, Res]) compact() (outstanding bool) {
	live := m.slabs[:0]
	for _, w := range m.slabs {
		sl := w.Value()
		if sl == nil {
			continue
		}
		live = append(live, w)
		for i := range sl.led.state {
			if !outstanding && sl.led.state[i].Load() == permitIssued {
				outstanding = true
			}
		}
	}
	clear(m.slabs[len(live):])
	m.slabs, m.kept = live, len(live)
	return outstanding
}

// Issued reports whether the source has issued a permit. It costs one
// atomic load.
func (s *PermitSource[Req, Res]) Issued() bool { return s.cur.Load() != nil }

// Outstanding reports whether a permit the source issued is neither
// called, released nor reclaimed yet: one in its user's hands, or one
// dropped that the collector has not reclaimed. It scans every slab still
// alive (64 permits each), under the source's lock: for a rare check (a
// stage's dropped-permit check), not for every call.
func (s *PermitSource[Req, Res]) Outstanding() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.made != nil && s.made.compact()
}

var leaked atomic.Uint64

// LeakedPermits reports how many permits the garbage-collection safety net
// has reclaimed in this process: each one is a permit some code dropped
// without calling Call or Release, a bug worth fixing.
func LeakedPermits() uint64 { return leaked.Load() }

// DroppedReporter is implemented by Reservations that report a permit
// dropped without Call or Release themselves (troupe's stages log it through
// their system's logger, naming the stage). For other Reservations the
// mistake is logged with slog.Default.
//
// PermitDropped runs on the runtime's cleanup goroutine: it must be safe for concurrent use.
type DroppedReporter interface {
	PermitDropped()
}

// reclaim releases the capacity of every permit of a collected slab that was
// issued but never called nor released, and logs the mistake. It runs on
// the runtime's cleanup goroutine, so a panicking Release is logged, never
// allowed to crash the process.
func reclaim[Req, Res any](led *ledger[Req, Res]) {
	for i := range led.state {
		if led.state[i].CompareAndSwap(permitIssued, permitSpent) {
			r := led.owner[i]
			led.owner[i] = nil
			leaked.Add(1)
			reclaimOne(r)
		}
	}
}

func reclaimOne[Req, Res any](r Reservation[Req, Res]) {
	defer func() {
		if v := recover(); v != nil {
			slog.Default().Error("troupe: Release of a dropped permit panicked", "panic", v)
		}
	}()
	if d, ok := r.(DroppedReporter); ok {
		d.PermitDropped()
	} else {
		slog.Default().Warn("troupe: permit dropped without Call or Release; capacity reclaimed by the garbage collector")
	}
	r.Release()
}
