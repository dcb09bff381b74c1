package stagekit

import "github.com/asynkron/protoactor-go/actor"

// renewAfter is how many children a host's supervisor actor spawns before
// the host replaces it, the next time it has none.
const renewAfter = 1024

// newSupervisor spawns a supervisor actor for h.
func (h *Host) newSupervisor() *actor.PID {
	props := actor.PropsFromProducer(func() actor.Actor { return &supervisorActor{h: h} })
	return h.sys.as.Root.SpawnPrefix(props, h.name+"-")
}

// renewLocked replaces h's supervisor actor, once it has spawned renewAfter
// children and has none left (h.mu held): protoactor's set of an actor's
// children keeps the map it grew to, so a long-lived host that spawned and
// closed many stages (the system's root host, under troupe.NewBuilder) would
// keep it for good. The old actor stops once its last child has terminated
// (a stopped stage is forgotten before its parent hears of it); the
// stages spawned from now on are the new one's children.
func (h *Host) renewLocked() {
	if h.spawned < renewAfter || h.closed {
		return
	}
	old := h.pid
	h.pid, h.spawned = h.newSupervisor(), 0
	h.sys.as.Root.Send(old, &stopReq{done: make(chan struct{})})
}
