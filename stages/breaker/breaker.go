package breaker

import (
	"errors"
	"fmt"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
)

// Breaker is a running circuit-breaker stage: a troupe.Service and a
// troupe.Closer. Its Stats' Detail is a Snapshot. It is safe for
// concurrent use.
type Breaker[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	b *behavior[Req, Res]
}

// New spawns a circuit breaker over inner in host h (nil is an error). A bad
// option is a *troupe.ConfigError naming the option (it matches
// troupe.ErrBadConfig).
//
// The stage sets no capacity of its own: reserving on it never waits, so
// an open breaker answers every call at once. Bound the calls with a limit
// stage inside or outside it.
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], opts ...Option[Res]) (*Breaker[Req, Res], error) {
	o := defaults()
	if err := opt.Apply("breaker", &o, opts); err != nil {
		return nil, err
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	b := &behavior[Req, Res]{o: &o, clocked: o.slowAfter > 0 || o.span > 0 || o.interval > 0, clock: stagekit.NewClock()}
	var ok bool
	if b.classify, ok = opt.As[func(Res, error) bool](o.classify); !ok {
		return nil, badFunc[Res]("Classify", o.classify)
	}
	if b.exclude, ok = opt.As[func(Res, error) bool](o.exclude); !ok {
		return nil, badFunc[Res]("Exclude", o.exclude)
	}
	host, err := stagekit.HostFrom(h)
	if err != nil {
		return nil, fmt.Errorf("breaker: %w", err)
	}
	b.log = host.System().Logger()
	b.m = newMachine(&o, b.clock)
	// Admission and counting are on the sender (OnSend, Complete), and the
	// actor forwards as it is: crossed on the caller's goroutine in its
	// ordinary state.
	st, err := stagekit.Spawn(h, stagekit.Config{Name: "breaker", CallerPath: true}, inner, b)
	if err != nil {
		return nil, fmt.Errorf("breaker: %w", err)
	}
	b.st, b.rep = st, st.Reporter()
	b.alarm = st.NewAlarm(delayEnded{})
	br := &Breaker[Req, Res]{b: b}
	br.Handle = stagekit.NewHandle(st, nil)
	return br, nil
}

// Layer returns a layer that puts a circuit breaker over the service
// inside it.
func Layer[Req, Res any](opts ...Option[Res]) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New(h, inner, opts...)
	})
}

// State returns the breaker's state now.
func (br *Breaker[Req, Res]) State() State { return br.b.snapshot().State }

// Snapshot returns the breaker's state and counts now.
func (br *Breaker[Req, Res]) Snapshot() Snapshot { return br.b.snapshot() }

// Open opens the breaker now, an operator's decision (a downstream known
// to be down for maintenance): calls are refused with ErrOpen for the next
// open delay, which then ends as any opening's does, in HalfOpen. An open
// breaker stays as it is. OnStateChange and the observer are told of the
// change as of any other; the calls in flight when it opens no longer
// count.
func (br *Breaker[Req, Res]) Open() { br.b.force(Open) }

// HalfOpen moves the breaker to HalfOpen now, an operator's decision: its
// trial calls go, and their outcomes close it or open it again. A breaker
// HalfOpen already stays as it is.
func (br *Breaker[Req, Res]) HalfOpen() { br.b.force(HalfOpen) }

// Reset closes the breaker now (failsafe-go's Close; Close itself closes
// the stage): its window is cleared and its consecutive openings are
// forgotten, so that the next opening waits OpenDelay again. A closed
// breaker has its window cleared too.
func (br *Breaker[Req, Res]) Reset() { br.b.force(Closed) }

// badFunc is New's error for a function of the wrong types.
func badFunc[Res any](what string, fn any) error {
	var zero Res
	return opt.Bad("breaker", what, fmt.Sprintf("%T", fn), fmt.Sprintf("the stage's responses are %T", zero))
}

func isRestart(err error) bool { return errors.Is(err, troupe.ErrRestarted) }
