package stagekit

import (
	"maps"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe/mailbox"
)

// stopReq asks the supervisor actor to stop itself; done is closed once it
// has stopped.
type stopReq struct{ done chan struct{} }

// restartReq asks the supervisor actor to restart a child whose restart was
// delayed.
type restartReq struct{ child *actor.PID }

// supervisorActor is a Host's actor: it spawns children on request and,
// being a SupervisorStrategy itself, decides their fate when they fail.
type supervisorActor struct {
	h    *Host
	self *actor.PID // set when it starts
	done chan struct{}

	// Its live children's mailboxes, by PID id (nil: a child spawned with
	// no troupe mailbox). The supervisor restarts or stops a child by
	// posting into its mailbox, never through the PID: a child that stopped
	// on its own (closed) while its failure was on its way to the
	// supervisor is gone from protoactor's registry, and a Restart sent to
	// its PID would be a dead letter; posted into its stopped mailbox, it
	// is dropped, and posted before the child's own Stop, it runs first.
	// A map, so that a host closing many stages forgets each in constant
	// time; remade smaller once it holds a quarter of its most (maps do not
	// shrink), so that a burst of children leaves no table behind. Owned by
	// the actor's goroutine.
	kids   map[string]*mailbox.Mailbox
	kidsHW int // the most kids held since the map was made
}

func (a *supervisorActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		a.self = c.Self()
	case *spawnReq:
		id := m.name + "-" + c.ActorSystem().ProcessRegistry.NextId()
		pid, err := c.SpawnNamed(m.props, id)
		if err == nil {
			a.addKid(pid.Id, m.mb)
		}
		m.reply <- spawnRes{pid: pid, err: err}
	case *stopReq:
		// Stop once every child has terminated: stopping earlier would send
		// Stop to children that are already gone (a dead letter).
		a.done = m.done
		if len(c.Children()) == 0 {
			c.Stop(c.Self())
		}
	case *restartReq:
		a.post(c.(actor.Supervisor), m.child, restartMsg)
	case *actor.Terminated:
		a.forgetKid(m.Who)
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
func (a *supervisorActor) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, rs *actor.RestartStatistics, reason, _ any) {
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
		a.post(sup, child, stopMsg)
	case d.Delay <= 0:
		a.post(sup, child, restartMsg)
	default:
		a.h.restartLater(a.self, child, d.Delay)
	}
}

// protoactor's lifecycle messages, as the supervisor posts them.
var (
	restartMsg = &actor.Restart{}
	stopMsg    = &actor.Stop{}
)

// post posts a lifecycle message into a live child's mailbox (see child);
// a child that has terminated gets nothing. A child spawned with no troupe
// mailbox gets it through its PID.
func (a *supervisorActor) post(sup actor.Supervisor, pid *actor.PID, msg any) {
	mb, ok := a.kids[pid.Id]
	switch {
	case !ok:
	case mb != nil:
		mb.PostSystemMessage(msg)
	case msg == restartMsg:
		sup.RestartChildren(pid)
	default:
		sup.StopChildren(pid)
	}
}

// addKid records a child just spawned.
func (a *supervisorActor) addKid(id string, mb *mailbox.Mailbox) {
	if a.kids == nil {
		a.kids = make(map[string]*mailbox.Mailbox)
	}
	a.kids[id] = mb
	a.kidsHW = max(a.kidsHW, len(a.kids))
}

// forgetKid drops a terminated child.
func (a *supervisorActor) forgetKid(pid *actor.PID) {
	delete(a.kids, pid.Id)
	switch n := len(a.kids); {
	case n == 0:
		a.kids, a.kidsHW = nil, 0
	case a.kidsHW >= 64 && n <= a.kidsHW/4:
		smaller := make(map[string]*mailbox.Mailbox, n) // maps.Clone would keep the table's size
		maps.Copy(smaller, a.kids)
		a.kids, a.kidsHW = smaller, n
	}
}

// restartLater has supervisor actor sup restart its child after d, unless
// the host closes first.
func (h *Host) restartLater(sup, child *actor.PID, d time.Duration) {
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
			h.sys.as.Root.Send(sup, &restartReq{child: child})
		}
	})
}

// dropStalePIDs clears the slot just past the end of kids, the supervisor
// actor's own children slice (protoactor's PIDSet.Values, which returns its
// backing slice): PIDSet.Remove shortens the slice by one without clearing
// the slot it leaves, so a host that spawned and closed many stages kept
// many of their PIDs (and ids) reachable (ARCHITECTURE.md has the
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
