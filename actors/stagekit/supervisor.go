package stagekit

import (
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe/internal/mailbox"
)

// stopReq asks the supervisor actor to stop itself; done is closed once it
// has stopped.
type stopReq struct{ done chan struct{} }

// restartReq asks the supervisor actor to restart a child whose restart was
// delayed.
type restartReq struct {
	child *actor.PID
	mb    *mailbox.Mailbox // the child's, from its failure (see post)
}

// supervisorActor is a Host's actor: it spawns children on request and,
// being a SupervisorStrategy itself, decides their fate when they fail.
type supervisorActor struct {
	h    *Host
	self *actor.PID // set when it starts
	done chan struct{}
}

func (a *supervisorActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		a.self = c.Self()
	case *spawnReq:
		id := m.name + "-" + c.ActorSystem().ProcessRegistry.NextId()
		pid, err := c.SpawnNamed(m.props, id)
		m.reply <- spawnRes{pid: pid, err: err}
	case *stopReq:
		// Stop once every child has terminated: stopping earlier would send
		// Stop to children that are already gone (a dead letter).
		a.done = m.done
		if len(c.Children()) == 0 {
			c.Stop(c.Self())
		}
	case *restartReq:
		a.post(c.(actor.Supervisor), m.child, m.mb, restartMsg)
	case *actor.Terminated:
		dropStalePIDs(c.Children())
		if a.done != nil && len(c.Children()) == 0 {
			c.Stop(c.Self())
		}
	case *actor.Stopped:
		if a.done != nil {
			close(a.done)
		}
	}
}

// HandleFailure implements actor.SupervisorStrategy for the host's children.
func (a *supervisorActor) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, rs *actor.RestartStatistics, reason, message any) {
	mb, _ := message.(*mailbox.Mailbox) // a troupe mailbox escalates with itself (see post)
	rs.Fail()
	var d Decision
	f := Failure{Stage: childName(child), Reason: reason, within: rs.NumberOfFailures}
	if err := Guard("strategy of host "+a.h.name, func() { d = a.h.strategy.Decide(f) }); err != nil {
		// A strategy that panics cannot be trusted to restart: stop the
		// stage; its callers are told (the failure stays the stage's own).
		a.h.sys.logger.Error("troupe: supervisor strategy panicked; stopping the stage", "host", a.h.name, "err", err)
		d = Decision{Directive: Stop}
	}
	switch {
	case d.Directive != Restart:
		a.post(sup, child, mb, stopMsg)
	case d.Delay <= 0:
		a.post(sup, child, mb, restartMsg)
	default:
		a.h.restartLater(a.self, child, mb, d.Delay)
	}
}

// protoactor's lifecycle messages, as the supervisor posts them.
var (
	restartMsg = &actor.Restart{}
	stopMsg    = &actor.Stop{}
)

// post posts a lifecycle message to a child: into its mailbox mb, which
// the child escalated its failure with, or, for a child with no troupe
// mailbox (mb nil), through its PID if it is still a child. Never through
// the PID of a child with a troupe mailbox: a child that stopped on its own
// (closed) while its failure was on its way to the supervisor is gone from
// protoactor's registry, and a Restart sent to its PID would be a dead
// letter; posted into its stopped mailbox, it is dropped, and posted before
// the child's own Stop, it runs first. Carried by the failure, the mailbox
// needs no table of the host's children, which would cost every idle
// stage its entry.
func (a *supervisorActor) post(sup actor.Supervisor, pid *actor.PID, mb *mailbox.Mailbox, msg any) {
	switch {
	case mb != nil:
		mb.PostSystemMessage(msg)
	case !slices.Contains(sup.Children(), pid):
		// terminated meanwhile: nothing to restart or stop
	case msg == restartMsg:
		sup.RestartChildren(pid)
	default:
		sup.StopChildren(pid)
	}
}

// restartLater has supervisor actor sup restart its child after d, unless
// the host closes first.
func (h *Host) restartLater(sup, child *actor.PID, mb *mailbox.Mailbox, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	if h.timers == nil {
		h.timers = map[*actor.PID]*time.Timer{}
	}
	h.timers[child] = time.AfterFunc(d, func() {
		h.mu.Lock()
		_, live := h.timers[child]
		delete(h.timers, child)
		h.mu.Unlock()
		if live {
			h.sys.as.Root.Send(sup, &restartReq{child: child, mb: mb})
		}
	})
}

// dropStalePIDs clears the slot just past the end of kids, the supervisor
// actor's own children slice (protoactor's PIDSet.Values, which returns its
// backing slice): PIDSet.Remove shortens the slice by one without clearing
// the slot it leaves, so a host that spawned and closed many stages kept
// many of their PIDs (and ids) reachable (docs/decisions.md has the
// figures). Called on every Terminated, right after protoactor's one
// Remove for it, so that slot is the only stale one: clearing them all
// each time made closing n stages cost n² steps. Only the actor's
// goroutine changes its children, so this is safe in its Receive.
func dropStalePIDs(kids []*actor.PID) {
	if n := len(kids); n < cap(kids) {
		kids[:n+1][n] = nil
	}
}

// childName is the name a child was spawned with: its PID's last segment.
func childName(pid *actor.PID) string {
	if pid == nil {
		return ""
	}
	return pid.Id[strings.LastIndexByte(pid.Id, '/')+1:]
}
