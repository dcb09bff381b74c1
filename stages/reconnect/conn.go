package reconnect

import (
	"context"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/mailbox"
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
	restarted()
	stopped(last error, failed bool)
}

// conn is the connection actor: it dials on demand, on a goroutine of its
// own, and fails (to its supervisor) when a dial fails or the connection it
// made breaks; the supervisor restarts it after a backoff, or stops it. It
// talks to its stage through the stage's mailbox, and the stage to it
// through its own mailbox directly, never by PID: a message to an actor that
// just stopped is answered, never a dead letter.
type conn[Target, Req, Res any] struct {
	mb        *mailbox.Mailbox
	host      *actors.Host
	connector troupe.Service[Target, troupe.Service[Req, Res]]
	target    Target
	timeout   time.Duration
	stage     notifier[Req, Res]
	done      chan struct{} // closed once the actor stopped
	closeOnce sync.Once

	// Owned by the actor goroutine.
	cancel   context.CancelFunc // the dial in progress
	gen      uint64             // of the dial in progress or last made
	live     bool               // the connection of gen is in use
	starts   int
	last     error // the last failure
	stopping bool  // stopped on purpose
}

func spawnConn[Target, Req, Res any](h *actors.Host, connector troupe.Service[Target, troupe.Service[Req, Res]], target Target, timeout time.Duration, stage notifier[Req, Res]) (*conn[Target, Req, Res], error) {
	c := &conn[Target, Req, Res]{host: h, connector: connector, target: target, timeout: timeout, stage: stage, done: make(chan struct{})}
	mb, err := mailbox.New(1, mailbox.OnDropped(c.dropped))
	if err != nil {
		return nil, err
	}
	c.mb = mb
	props := actor.PropsFromProducer(func() actor.Actor { return c }, actor.WithMailbox(mb.Producer()))
	if _, err := h.SpawnActor(props, "connection", c); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *conn[Target, Req, Res]) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		c.starts++
		if c.starts > 1 {
			c.stage.restarted()
		}
	case connectMsg:
		c.dial()
	case *dialResult[Req, Res]:
		c.dialed(ctx, m)
	case brokenMsg:
		if m.gen == c.gen && c.live { // not an old connection's news
			c.live = false
			c.last = m.err
			escalate(ctx, m.err)
		}
	case stopMsg:
		c.stopping = true
		c.mb.PostSystemMessage(&actor.Stop{}) // not ctx.Stop: see actors.Stage.stopSelf
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

// dial starts a dial unless one is in progress.
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
		svc, err := troupe.Do(ctx, c.connector, c.target)
		c.mb.PostControl(&dialResult[Req, Res]{gen: gen, svc: svc, err: err})
	}()
}

func (c *conn[Target, Req, Res]) dialed(ctx actor.Context, m *dialResult[Req, Res]) {
	if m.gen != c.gen || c.cancel == nil { // a dial given up since (restart)
		closeService(m.svc)
		return
	}
	c.cancel()
	c.cancel = nil
	if m.err != nil {
		c.last = m.err
		c.stage.dialFailed(m.err)
		escalate(ctx, m.err)
		return
	}
	c.live = true
	c.stage.connected(m.svc, m.gen)
}

func (c *conn[Target, Req, Res]) stopDial() {
	if c.cancel != nil {
		c.cancel()
		c.cancel = nil
		c.gen++ // its result, if it comes, is stale
	}
}

// dropped closes a connection that arrived after the actor stopped.
func (c *conn[Target, Req, Res]) dropped(msg any, _ error) {
	if m, ok := msg.(*dialResult[Req, Res]); ok {
		closeService(m.svc)
	}
}

// post sends the actor a message; while its supervisor holds it suspended
// (a backoff), the message waits.
func (c *conn[Target, Req, Res]) post(msg any) { c.mb.PostControl(msg) }

// Close stops the actor for good and waits for it.
func (c *conn[Target, Req, Res]) Close(ctx context.Context) error {
	c.closeOnce.Do(func() { c.mb.PostUrgent(stopMsg{}) })
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// escalate fails the actor to its supervisor, as a panic would.
func escalate(ctx actor.Context, err error) {
	if sup, ok := ctx.(interface{ EscalateFailure(reason, msg any) }); ok {
		sup.EscalateFailure(err, nil)
	}
}

// closeService closes a discarded connection, on a goroutine of its own:
// closing may block.
func closeService[Req, Res any](svc troupe.Service[Req, Res]) {
	if cl, ok := svc.(troupe.Closer); ok {
		go func() { _ = cl.Close(context.Background()) }()
	}
}
