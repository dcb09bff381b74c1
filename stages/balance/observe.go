package balance

import (
	"context"
	"log/slog"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
)

// StageKind is the Stage and the StageKind of every event a balancer
// reports to the observer given with Observe.
const StageKind = "balance"

// Observe makes the balancer report to o, under the pipeline name
// pipeline (see troupe.Observer), each endpoint it picks for a call
// (troupe.EventPicked, on the caller's goroutine before the call is
// sent, with the call's context) and each endpoint added to its set,
// removed from it, and drained of its calls (EventEndpointAdded,
// EventEndpointRemoved, EventEndpointDrained). Every event names its
// endpoint in Endpoint: the key formatted with fmt once, when the
// endpoint is inserted (a key that is a fmt.Stringer names itself). A
// panic in o is logged (see Logger); one at EventPicked is the call's
// outcome instead of the call, an error matching troupe.ErrPanic. With no
// observer, a pick pays one nil check. A nil o is New's error.
func Observe(o troupe.Observer, pipeline string) Setting {
	return func(c *config) {
		if o == nil {
			c.fail(opt.Nil("balance", "Observe"))
		}
		c.obs, c.pipeline = o, pipeline
	}
}

// Logger sets the logger a panic in the observer is logged to (default
// slog.Default()). A nil l is New's error.
func Logger(l *slog.Logger) Setting {
	return func(c *config) {
		if l == nil {
			c.fail(opt.Nil("balance", "Logger"))
		}
		c.log = l
	}
}

// reporter tells the observer what the balancer does; nil when there is
// none. Read-only once made: safe for concurrent use.
type reporter struct {
	o        troupe.Observer
	pipeline string
	log      *slog.Logger
}

func newReporter(c config) *reporter {
	if c.obs == nil {
		return nil
	}
	log := c.log
	if log == nil {
		log = slog.Default()
	}
	return &reporter{o: c.obs, pipeline: c.pipeline, log: log}
}

// report tells the observer of ev, under Guard: a panic in it is logged
// and returned, a *troupe.PanicError.
func (r *reporter) report(ev troupe.Event) error {
	ev.Pipeline, ev.Stage, ev.StageKind = r.pipeline, StageKind, StageKind
	err := stagekit.Guard("observer of balance", func() { r.o.Observe(ev) })
	if err != nil {
		r.log.Error("balance: observer panicked", "pipeline", r.pipeline, "endpoint", ev.Endpoint, "event", ev.Type.String(), "err", err)
	}
	return err
}

// endpointEvent reports an event of ep's that no call waits for (r not
// nil): a panic in the observer is only logged.
func (r *reporter) endpointEvent(typ troupe.EventType, name string, err error) {
	_ = r.report(troupe.Event{Type: typ, Endpoint: name, Err: err})
}

// picked reports that ep was picked for the call of ctx (b.obs not nil),
// and, when the observer panicked, gives p back and returns the panic:
// the call's outcome, for it is not made.
func (b *Balancer[K, Req, Res]) picked(ctx context.Context, ep *endpoint[K, Req, Res], p *troupe.Permit[Req, Res]) error {
	err := b.obs.report(troupe.Event{Type: troupe.EventPicked, Endpoint: ep.name, Context: ctx})
	if err != nil {
		_ = p.Release()
		b.finish(ep, released, unread, nil)
	}
	return err
}
