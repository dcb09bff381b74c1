package stagekit

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/troupe-go/troupe"
)

// Host is a supervisor actor and the stages spawned under it: stages are its
// children, so its Strategy decides what happens when one fails (a stage
// spawned from protoactor's root context would not be governed by it). A
// Host is a troupe.Host. It is safe for concurrent use.
type Host struct {
	sys      *System
	name     string
	strategy Strategy

	mu      sync.Mutex
	pid     *actor.PID                 // the supervisor actor; replaced by renew; guarded by mu
	spawned int                        // children spawned by the current supervisor actor; guarded by mu
	stages  map[stopper]uint64         // live stages, by spawn order (innermost first); guarded by mu
	peak    int                        // the most stages it has held since the map was made; guarded by mu
	seq     uint64                     // spawn counter; guarded by mu
	closed  bool                       // guarded by mu
	timers  map[*actor.PID]*time.Timer // delayed restarts; guarded by mu
}

// ClosesFirst is implemented by actors spawned in a host (SpawnActor) whose
// Close waits for no user code and answers the requests that wait on them:
// a Reconnect's connection actor, whose Close cancels its dial. Host.Close
// closes them before the stages, so that stages waiting on them can drain.
//
// Implementations must be safe for concurrent use.
type ClosesFirst interface {
	ClosesFirst() bool
}

// stopper is a spawned stage, as its host sees it.
type stopper interface {
	Close(ctx context.Context) error
}

// TroupeHost marks Host as a troupe.Host.
func (h *Host) TroupeHost() {}

// System returns the system h belongs to.
func (h *Host) System() *System { return h.sys }

// Name returns the host's name.
func (h *Host) Name() string { return h.name }

// supervisorPID returns the supervisor actor's PID.
// A host that has spawned many children replaces it once it has none (see
// renewLocked), so the PID may change.
func (h *Host) supervisorPID() *actor.PID {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pid
}

func (s *System) newHost(name string, strategy Strategy) *Host {
	h := &Host{sys: s, name: name, strategy: strategy, stages: map[stopper]uint64{}}
	h.pid = h.newSupervisor()
	return h
}

// spawnReq asks a supervisor actor to spawn a child: only an actor's own
// goroutine may change its children.
type spawnReq struct {
	props *actor.Props
	name  string
	reply chan spawnRes
}

type spawnRes struct {
	pid *actor.PID
	err error
}

// spawn starts a child of h's supervisor actor and registers it for Close.
func (h *Host) spawn(props *actor.Props, name string, st stopper) (*actor.PID, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrShutdown
	}
	h.seq++
	h.stages[st] = h.seq
	h.peak = max(h.peak, len(h.stages))
	h.spawned++
	sup := h.pid
	h.mu.Unlock()
	req := &spawnReq{props: props, name: name, reply: make(chan spawnRes, 1)}
	h.sys.as.Root.Send(sup, req)
	res := <-req.reply
	if res.err != nil {
		h.forget(st)
	}
	return res.pid, res.err
}

func (h *Host) forget(st stopper) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.stages, st)
	if h.peak >= 1024 && len(h.stages) < h.peak/4 {
		// A Go map keeps the buckets it grew (maps.Clone too): after a burst
		// of stages, copy the rest into a map their size (amortised: once
		// per shrinking to a quarter).
		m := make(map[stopper]uint64, len(h.stages))
		for k, v := range h.stages {
			m[k] = v
		}
		h.stages, h.peak = m, len(m)
	}
	if len(h.stages) == 0 {
		h.renewLocked()
	}
}

// bySpawn returns the keys of m (stages, or hosts), most recent first.
func bySpawn[K comparable](m map[K]uint64) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b K) int { return cmp.Compare(m[b], m[a]) })
	return ks
}

// Close closes every stage of h, the most recently spawned (outermost)
// first, then stops the supervisor actor. Later spawns fail with
// ErrShutdown.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	sup := h.pid
	stages := bySpawn(h.stages)
	for _, t := range h.timers {
		t.Stop()
	}
	h.timers = nil
	h.mu.Unlock()
	var errs []error
	// Those that close promptly and answer what waits on them go first, so
	// that the stages above them can drain (a Reconnect's dial would
	// otherwise keep them waiting until ctx ends).
	for _, st := range stages {
		if f, ok := st.(ClosesFirst); ok && f.ClosesFirst() {
			errs = append(errs, st.Close(ctx))
		}
	}
	for _, st := range stages {
		if f, ok := st.(ClosesFirst); !ok || !f.ClosesFirst() {
			errs = append(errs, st.Close(ctx))
		}
	}
	stopped := make(chan struct{})
	h.sys.as.Root.Send(sup, &stopReq{done: stopped})
	<-stopped
	h.sys.forgetHost(h)
	return errors.Join(errs...)
}

// spawnActor (rt.SpawnActor) starts an actor of a stage package's own (Reconnect's
// connection actor) as a child of h's supervisor actor, so that h's Strategy
// governs it; st is closed with the host. When props run the actor in a
// troupe mailbox (actor.WithMailbox(mb.Producer())), the supervisor
// restarts and stops the actor by posting into that mailbox, which cannot
// be a dead letter if the actor stopped meanwhile: the mailbox escalates a
// panic with itself as the failure's message, and an actor that reports a
// failure itself (EscalateFailure) passes its mailbox as the message too.
// Call Forget when it stops on its own.
func (h *Host) spawnActor(props *actor.Props, name string, st troupe.Closer) (*actor.PID, error) {
	return h.spawn(props, name, st)
}

// Forget removes st from the things h closes.
func (h *Host) Forget(st interface{ Close(context.Context) error }) { h.forget(st) }
