package loadshed

import (
	"context"
	"fmt"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
)

// DefaultCapacity is the capacity of a LoadShed's mailbox unless Capacity
// says otherwise: one request may wait for the inner service's readiness.
const DefaultCapacity = 1

// LoadShed is a running load-shedding stage: a troupe.Service, a
// troupe.Closer, and an stagekit.Inner that is always ready to the stage
// outside it. It is safe for concurrent use.
type LoadShed[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	st       *stagekit.Stage[Req, Res]
	shed     troupe.PermitSource[Req, Res] // overloaded permits: no slot
	levels   levels                        // slot limits by priority; nil: none; read-only
	capacity int                           // read-only
}

// Option configures a LoadShed.
//
// Options are plain values, safe for concurrent use.
type Option func(*options)

type options struct {
	cfg  stagekit.Config
	keep []kept
}

// Capacity sets the number of slots of the stage's mailbox (default 1): how
// many requests may wait in the stage for the inner service's readiness
// before calls are shed. It must be at least 1: a LoadShed's capacity is
// what it sheds by, so 0 does not mean "no limit of its own", as for other
// stages (such a LoadShed would never shed), nor "shed whenever the inner
// service is not ready" (one request always waits in the stage as it
// crosses it): it is New's error, a *troupe.ConfigError.
func Capacity(n int) Option { return func(o *options) { o.cfg.Capacity = n } }

// New spawns a load-shedding stage over inner, in host h (nil is an error).
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], opts ...Option) (*LoadShed[Req, Res], error) {
	o := options{cfg: stagekit.Config{Name: "loadshed", Capacity: DefaultCapacity}}
	if err := opt.Apply("loadshed", &o, opts); err != nil {
		return nil, err
	}
	capacity := o.cfg.Capacity
	if capacity < 1 || capacity > stagekit.MaxCapacity {
		return nil, opt.Bad("loadshed", "Capacity", capacity, fmt.Sprintf("need 1 to %d slots to shed by", stagekit.MaxCapacity))
	}
	lv, err := newLevels(o.keep, capacity)
	if err != nil {
		return nil, err
	}
	o.cfg.CallerPath = true // it forwards every request as it is: crossed on the caller's goroutine in its ordinary state
	st, err := stagekit.Spawn(h, o.cfg, inner, stagekit.Passthrough[Req, Res]{})
	if err != nil {
		return nil, fmt.Errorf("loadshed: %w", err)
	}
	l := &LoadShed[Req, Res]{st: st, levels: lv, capacity: capacity}
	l.Handle = stagekit.NewHandle(st, (*shedInner[Req, Res])(l))
	return l, nil
}

// Layer returns a layer that puts a LoadShed over the service inside it.
func Layer[Req, Res any](opts ...Option) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New(h, inner, opts...)
	})
}

// Reserve returns a permit at once, never waiting: an ordinary
// permit when the stage has a free slot (one the priority ctx carries may
// use, see KeepFor), otherwise one whose Call returns ErrOverloaded without
// touching the inner service. The priority is ctx's, not the one of the
// context the permit is called with. It returns ctx's
// error when ctx is already done, and the close error (a
// *troupe.ClosedError, wrapping the inner service's readiness error when
// that closed the stage) once the stage is closed; both hold nothing.
func (l *LoadShed[Req, Res]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ok, err := l.tryReserve(ctx)
	switch {
	case err != nil:
		return nil, err
	case ok:
		return l.st.Permit(), nil
	default:
		return l.shed.Issue(overloaded[Req, Res]{l}), nil
	}
}

// overloaded is the reservation of a permit issued while the stage was
// full: it holds nothing.
type overloaded[Req, Res any] struct{ l *LoadShed[Req, Res] }

// Call sheds the request.
func (o overloaded[Req, Res]) Call(ctx context.Context, _ Req) (Res, error) {
	var zero Res
	return zero, o.l.shedErr(ctx)
}

// shedErr is the error of a shed call, reported to the observer
// (EventShed, and EventRejected with ReasonOverloaded): ErrOverloaded,
// joined with the observer's panic if it panicked.
func (l *LoadShed[Req, Res]) shedErr(ctx context.Context) error {
	r := l.st.Reporter()
	if r == nil {
		return ErrOverloaded
	}
	perr := r.Report(troupe.Event{Type: troupe.EventShed, Err: ErrOverloaded, Context: ctx})
	if err := r.Report(troupe.Event{Type: troupe.EventRejected, Reason: troupe.ReasonOverloaded, Err: ErrOverloaded}); perr == nil {
		perr = err
	}
	if perr != nil {
		return stagekit.JoinPanic(perr, ErrOverloaded)
	}
	return ErrOverloaded
}

// Release does nothing: an overloaded permit holds no capacity.
func (overloaded[Req, Res]) Release() {}

// ReserveAndCall is Reserve then Call (troupe.Do uses it): a LoadShed never
// waits in line, it sheds. NOTE: it shadows the embedded stage's one, which
// would wait for a slot.
func (l *LoadShed[Req, Res]) ReserveAndCall(ctx context.Context, req Req) (Res, error) {
	p, err := l.Reserve(ctx)
	if err != nil {
		var zero Res
		return zero, err
	}
	return p.Call(ctx, req)
}

// tryReserve takes a slot the priority ctx carries may use, without
// waiting; without priorities, any free slot.
func (l *LoadShed[Req, Res]) tryReserve(ctx context.Context) (bool, error) {
	if l.levels == nil {
		return l.st.TakeSlot()
	}
	return l.st.TakeSlotWithin(l.levels.limit(ctx, l.capacity))
}
