package reconnect

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/mailbox"
	"github.com/troupe-go/troupe/internal/rt"
)

// Messages to the connection actor.
type (
	connectMsg struct{} // the stage wants a connection
	brokenMsg  struct { // the connection of dial gen broke
		gen uint64
		err error
	}
	stopMsg                  struct{} // close: stop for good
	dialResult[Req, Res any] struct { // a dial ended
		gen uint64
		svc troupe.Service[Req, Res]
		err error
	}
)

// notifier is the connection actor's view of its stage.
type notifier[Req, Res any] interface {
	connected(svc troupe.Service[Req, Res], gen uint64)
	dialFailed(err error)
	restarted(last error)
	stopped(last error, failed bool)
}

// conn is the connection actor: it dials on demand, on a goroutine of its
// own, and fails (to its supervisor) when a dial fails or the connection it
// made breaks; the supervisor restarts it after a backoff, or stops it. It
// talks to its stage through the stage's mailbox, and the stage to it
// through its own mailbox directly, never by PID: a message to an actor that
// just stopped is answered, never a dead letter.
//
// Each failure it reports carries its streak (see connFailure), from which
// the supervisor takes the backoff: a connection that stayed healthy resets
// it. NOTE: supervisor.Backoff reads the streak (supervisor.Streak).
type conn[Target, Req, Res any] struct {
	mb           *mailbox.Mailbox
	host         *stagekit.Host
	connector    troupe.Service[Target, troupe.Service[Req, Res]]
	target       Target
	timeout      time.Duration
	healthyAfter time.Duration
	log          *slog.Logger
	stage        notifier[Req, Res]
	spawned      atomic.Bool   // set once the actor is spawned: it may be posted to
	done         chan struct{} // closed once the actor stopped
	closeOnce    sync.Once

	// Owned by the actor goroutine.
	cancel   context.CancelFunc // the dial in progress
	gen      uint64             // of the dial in progress or last made
	live     bool               // the connection of gen is in use
	since    time.Time          // when the connection of gen was made
	streak   int                // failures since the last healthy connection
	starts   int
	last     error // the last failure
	stopping bool  // stopped on purpose
}

func newConn[Target, Req, Res any](h *stagekit.Host, connector troupe.Service[Target, troupe.Service[Req, Res]], target Target, o options, stage notifier[Req, Res]) (*conn[Target, Req, Res], error) {
	c := &conn[Target, Req, Res]{host: h, connector: connector, target: target, timeout: o.timeout, healthyAfter: o.healthyAfter,
		log: h.System().Logger(), stage: stage, done: make(chan struct{})}
	mb, err := mailbox.New(1, mailbox.OnDropped(c.dropped))
	if err != nil {
		return nil, err
	}
	c.mb = mb
	return c, nil
}

// spawn starts the actor.
func (c *conn[Target, Req, Res]) spawn() error {
	props := actor.PropsFromProducer(func() actor.Actor { return c }, actor.WithMailbox(c.mb.Producer()))
	if _, err := rt.SpawnActor(c.host, props, "connection", c); err != nil {
		return err
	}
	c.spawned.Store(true)
	return nil
}

func (c *conn[Target, Req, Res]) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		c.starts++
		if c.starts > 1 {
			c.stage.restarted(c.last)
		}
	case connectMsg:
		c.dial()
	case *dialResult[Req, Res]:
		c.dialed(ctx, m)
	case brokenMsg:
		if m.gen == c.gen && c.live { // not an old connection's news
			c.live = false
			if time.Since(c.since) >= c.healthyAfter {
				c.streak = 0 // it was healthy: the backoff starts over
			}
			c.fail(ctx, m.err)
		}
	case stopMsg:
		c.stopping = true
		c.mb.PostSystemMessage(&actor.Stop{}) // not ctx.Stop: see stagekit.Stage.stopSelf
	case *actor.Restarting:
		c.stopDial()
	case *actor.Stopped:
		c.stopDial()
		c.mb.Stop()
		c.host.Forget(c)
		c.stage.stopped(c.last, !c.stopping)
		close(c.done)
	}
}

// dial starts a dial unless one is in progress. The connector runs on a
// goroutine of its own, under stagekit.Guard: a panic in it is a failed dial.
func (c *conn[Target, Req, Res]) dial() {
	if c.cancel != nil {
		return
	}
	c.gen++
	c.live = false
	gen := c.gen
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	c.cancel = cancel
	go func() {
		svc, err := stagekit.Guard1("reconnect: connector", func() (troupe.Service[Req, Res], error) {
			return troupe.Do(ctx, c.connector, c.target)
		})
		if err == nil && svc == nil {
			err = errNilConnection
		}
		c.mb.PostControl(&dialResult[Req, Res]{gen: gen, svc: svc, err: err})
	}()
}

func (c *conn[Target, Req, Res]) dialed(ctx actor.Context, m *dialResult[Req, Res]) {
	if m.gen != c.gen || c.cancel == nil { // a dial given up since (restart)
		closeService(c.log, m.svc)
		return
	}
	c.cancel()
	c.cancel = nil
	if m.err != nil {
		c.stage.dialFailed(m.err)
		c.fail(ctx, m.err)
		return
	}
	c.live = true
	c.since = time.Now()
	c.stage.connected(m.svc, m.gen)
}

// fail reports a failure to the supervisor, as a panic would, with the
// streak it makes.
func (c *conn[Target, Req, Res]) fail(ctx actor.Context, err error) {
	c.last = err
	c.streak++
	if sup, ok := ctx.(interface{ EscalateFailure(reason, msg any) }); ok {
		sup.EscalateFailure(&connFailure{err: err, streak: c.streak}, c.mb) // the mailbox the supervisor acts through
	}
}

func (c *conn[Target, Req, Res]) stopDial() {
	if c.cancel != nil {
		c.cancel()
		c.cancel = nil
		c.gen++ // its result, if it comes, is stale
	}
}

// dropped closes a connection that arrived after the actor stopped.
// ClosesFirst tells the host to close the connection actor before the
// stages (stagekit.ClosesFirst): its Close cancels the dial and waits for no
// user code, so the stages above can drain.
func (c *conn[Target, Req, Res]) ClosesFirst() bool { return true }

func (c *conn[Target, Req, Res]) dropped(msg any, _ error) {
	if m, ok := msg.(*dialResult[Req, Res]); ok {
		closeService(c.log, m.svc)
	}
}

// post sends the actor a message; while its supervisor holds it suspended
// (a backoff), the message waits.
func (c *conn[Target, Req, Res]) post(msg any) { c.mb.PostControl(msg) }

// stop asks the actor to stop for good, even while its supervisor holds it
// suspended, unless it never started.
func (c *conn[Target, Req, Res]) stop() {
	if c.spawned.Load() {
		c.closeOnce.Do(func() { c.mb.PostUrgent(stopMsg{}) })
	}
}

// Close stops the actor for good and waits for it: a dial in progress is
// cancelled (its result, when it comes, is closed), and the stage is told.
// It does not wait for the dial's goroutine, and stopping never waits for
// user code, so Close returns promptly whatever ctx says.
func (c *conn[Target, Req, Res]) Close(context.Context) error {
	if !c.spawned.Load() {
		return nil
	}
	c.stop()
	<-c.done
	return nil
}

// connFailure is the reason the connection actor fails with: the error,
// and the failures in a row since the last healthy connection, this one
// included. It implements supervisor.Streak (NOTE: the method set is that
// interface's, without importing it), and unwraps to the error.
type connFailure struct {
	err    error
	streak int
}

func (f *connFailure) Error() string { return f.err.Error() }
func (f *connFailure) Unwrap() error { return f.err }

// Streak returns the failures in a row since the last healthy connection.
func (f *connFailure) Streak() int { return f.streak }

// closeService closes a discarded connection, on a goroutine of its own
// (closing may block), under stagekit.Guard: a panic in Close is logged.
func closeService[Req, Res any](log *slog.Logger, svc troupe.Service[Req, Res]) {
	if cl, ok := svc.(troupe.Closer); ok {
		go func() {
			if err := stagekit.Guard("reconnect: closing a connection", func() { _ = cl.Close(context.Background()) }); err != nil {
				log.Error("reconnect: closing a discarded connection panicked", "err", err)
			}
		}()
	}
}
