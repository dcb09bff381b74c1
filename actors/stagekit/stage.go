package stagekit

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/internal/mailbox"
)

// Behavior is what makes a stage a timeout, a retry, a buffer...: the
// stage-specific part of a stage actor. Its methods run on the stage's actor
// goroutine, one at a time; they must not block.
//
// Its methods other than Dropped run on the stage's actor, one at a time: a Behavior need not be safe for concurrent use, but what it shares with hooks or senders must be.
type Behavior[Req, Res any] interface {
	// Request handles a request the stage took from its mailbox. The stage
	// holds e, and a slot for it, until the behavior forwards it
	// (Stage.Forward), answers it (Stage.Answer), or keeps it (then the
	// behavior must answer or forward it later, and Fail it on demand).
	Request(s *Stage[Req, Res], e *Envelope[Req, Res])
	// Control handles a control message of the behavior's own.
	Control(s *Stage[Req, Res], msg any)
	// Fail answers with err every request the behavior keeps: the stage is
	// restarting (err is a *troupe.RestartError) or stopping. When its
	// inner service broke (Stage.Broken), it answers only those it keeps
	// for itself, not those it sent on, and is called again as it stops.
	Fail(s *Stage[Req, Res], err error)
	// Idle reports whether the behavior keeps no request: a closing stage
	// stops once its mailbox is empty and its behavior idle.
	Idle() bool
	// Dropped answers a control message of the behavior's own that the
	// stage will never process (it stopped). It may run on any goroutine.
	Dropped(msg any, err error)
}

// SendHook is implemented by behaviors that act when a request is sent to
// the stage: OnSend runs on the sender's goroutine, which holds e, just
// before e is queued (a timeout starts its clock there: the call is made
// now). An error answers e at once with that error, and frees the slot
// reserved for e: the request never enters the mailbox (a breaker refuses
// calls this way, without a hop).
//
// OnSend runs on senders' goroutines, several at once: it must be safe for concurrent use.
type SendHook[Req, Res any] interface {
	OnSend(s *Stage[Req, Res], e *Envelope[Req, Res]) error
}

// Passthrough is a Behavior that forwards every request. Stage behaviors
// embed it and override what they need.
//
// It has no state: safe for concurrent use.
type Passthrough[Req, Res any] struct{}

// Request forwards e.
func (Passthrough[Req, Res]) Request(s *Stage[Req, Res], e *Envelope[Req, Res]) { s.Forward(e) }

// Control ignores msg.
func (Passthrough[Req, Res]) Control(*Stage[Req, Res], any) {}

// Fail does nothing: a Passthrough keeps nothing.
func (Passthrough[Req, Res]) Fail(*Stage[Req, Res], error) {}

// Idle reports true.
func (Passthrough[Req, Res]) Idle() bool { return true }

// Dropped does nothing.
func (Passthrough[Req, Res]) Dropped(any, error) {}

// defaultInline is Config.Inline's default (see docs/decisions.md for the
// measurements behind it).
var defaultInline = 32

// Stage is one stage actor: a protoactor-go actor with a reservation mailbox
// whose free slots are the stage's readiness, a Behavior, and the inner
// service it hands requests on to. A Stage is a troupe.Service (Reserve
// returns a permit for one of its slots), an Inner for the stage outside it,
// and a troupe.Closer. It is safe for concurrent use; the fields marked
// "actor" are owned by its actor goroutine.
type Stage[Req, Res any] struct {
	name  string
	host  *Host
	mb    *mailbox.Mailbox
	pid   *actor.PID
	inner Inner[Req, Res]
	beh   Behavior[Req, Res]
	hooks *hooks[Req, Res] // beh's optional methods; nil: none. Set by Spawn, then read-only
	hold  bool
	// callerPath: the stage's behaviour forwards every request as it is
	// (Config.CallerPath) and its inner service is a stage or a function,
	// whose readiness can be asked from any goroutine. Set by Spawn, then
	// read-only.
	callerPath bool
	// onCaller: a request may cross the stage on its caller's goroutine,
	// without the actor (see forwardOnCaller): the actor's word, set by it
	// whenever its state changes, read by senders. With hold and callerPath
	// in one word.
	onCaller atomic.Bool
	obs      *Reporter // the observer's; nil: none. Set by Spawn, then read-only

	permits troupe.PermitSource[Req, Res]
	roots   *sync.Pool // root envelopes for calls made through permits

	// Parking: the request waiting for the inner service.
	parked     *Envelope[Req, Res]   // actor
	backlog    []*Envelope[Req, Res] // actor; forwarded while a request was parked, in order
	paused     bool                  // actor; the behavior asked to take no requests
	waiter     *Waiter               // actor; waits on inner, posts grant (see newWaiter)
	grant      *grantMsg[Req, Res]   // actor; reused: one grant outstanding at a time
	parkedDone *parkedCtxDone        // reused: one parked request at a time
	watchFn    func()                // made once: posts parkedDone
	ctx        actor.Context         // actor; the context of the message in hand
	actx       actor.Context         // actor; the actor's context, set when it starts
	inHand     *Envelope[Req, Res]   // actor; the request being forwarded
	kept       *Envelope[Req, Res]   // actor; the request in hand that the behavior keeps (Keep)
	closing    closeState            // actor
	closeErr   error                 // actor; what queued and held requests get when aborted

	outerIn *outerInner[Req, Res] // set by NewHandle when the stage gives the stage outside another Inner side; then read-only

	// The callers that entered by this stage, and the stage's cold state:
	// made by the first call, failure or close (see ent), never changed
	// once made; an idle stage has none.
	entries atomic.Pointer[entries[Req, Res]]

	closeOnce sync.Once
	draining  atomic.Bool   // set by the actor when it starts draining; read by Recheck
	done      chan struct{} // closed when the actor has stopped
}

// entries is what every call that enters by a stage touches, on a cache
// line of its own: it is 64 bytes, so the allocator places it on a 64-byte
// boundary, and the callers' atomic adds do not contend with the writes of
// the stage's actor to the Stage (measured: 20-30 ns a call when they
// shared a line). The rest of the line holds the Stage's cold fields,
// written only when the stage fails or closes, never while it serves
// calls: there they cost the Stage no bytes (it stays in a smaller size
// class) and the callers no contention.
type entries[Req, Res any] struct {
	// The callers that entered by the stage and have not returned: a
	// closing stage stops only once there are none, or once Close's context
	// ends (then their work is abandoned: closed is cancelled with the
	// close error, see workCtx).
	// Counted in shards, each on a line of its own, a caller's by its call
	// state: callers on different cores add and subtract on different
	// lines (see waitingShard).
	waiting *[waitShards]waitShard      // made with the line, never changed
	closed  atomic.Pointer[closeSignal] // cancelled when the stage abandons its callers' work; made by the first call (closeSignalOf)

	failure   error                 // actor; the last panic
	culprits  []*Envelope[Req, Res] // actor; the requests in hand when it panicked
	abandoned int64                 // actor; the callers still waiting when it abandoned their work; read once done is closed
}

// ent returns the stage's callers' line, making it on first use: a stage
// that never served a call has none, 64 bytes less for an idle pipeline's
// every stage. Safe from any goroutine.
func (s *Stage[Req, Res]) ent() *entries[Req, Res] {
	if e := s.entries.Load(); e != nil {
		return e
	}
	e := &entries[Req, Res]{waiting: new([waitShards]waitShard)}
	if !s.entries.CompareAndSwap(nil, e) {
		return s.entries.Load()
	}
	return e
}

// waitingCallers is entries.waiting, without making the line: none when
// it was never made.
func (s *Stage[Req, Res]) waitingCallers() int64 {
	var n int64
	if e := s.entries.Load(); e != nil {
		for i := range e.waiting {
			n += e.waiting[i].n.Load()
		}
	}
	return n
}

// waitShards is how many shards a stage counts its waiting callers in.
const waitShards = 8

// waitShard is one shard of a stage's waiting callers, a cache line.
type waitShard struct {
	n atomic.Int64
	_ [56]byte
}

// waitingShard returns the shard that counts the caller of call state c: a
// hash of its address, so that callers (whose pooled call states stay on
// their processors) spread over the shards, and a caller's add and its
// subtract meet in one shard.
func (e *entries[Req, Res]) waitingShard(c *callState[Req, Res]) *atomic.Int64 {
	h := (uint64(uintptr(unsafe.Pointer(c))) >> 4) * 0x9E3779B97F4A7C15
	return &e.waiting[h>>61].n
}

// failureOf is entries.failure, without making the line.
func (s *Stage[Req, Res]) failureOf() error {
	if e := s.entries.Load(); e != nil {
		return e.failure
	}
	return nil
}

type closeState int

const (
	open     closeState = iota
	draining            // Close: what it accepted finishes, then it stops
	broken              // the inner service broke: what it holds is answered, what it handed on finishes, then it stops
	aborting            // stopping: everything left is answered with closeErr
)

// grantMsg carries the outcome of a ReserveAsync on inner.
type grantMsg[Req, Res any] struct {
	inner Inner[Req, Res]
	err   error
}

// parkedCtxDone says the parked request's context may have ended.
type parkedCtxDone struct{}

// Spawn starts a stage with behavior beh over inner in host h.
func Spawn[Req, Res any](h troupe.Host, cfg Config, inner troupe.Service[Req, Res], beh Behavior[Req, Res]) (*Stage[Req, Res], error) {
	host, err := HostFrom(h)
	if err != nil {
		return nil, err
	}
	if inner == nil || beh == nil {
		return nil, &troupe.ConfigError{Stage: cfg.Name, Option: "Spawn", Why: "nil inner service or behavior"}
	}
	if v, ok := inner.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("actors: Spawn %s: inner service: %w", cfg.Name, err)
		}
	}
	if cfg.Capacity, err = CheckCapacity(cfg.Name, cfg.Capacity); err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = "stage"
	}
	kind := cfg.Name
	s := &Stage[Req, Res]{}
	if sh, ok := h.(troupe.StageHost); ok {
		cfg.Name = sh.Claim(cfg.Name, func(name string) {
			s.name = name
			if s.obs != nil {
				s.obs.rename(name)
			}
		})
	}
	*s = Stage[Req, Res]{
		name:       cfg.Name,
		host:       host,
		obs:        host.reporter(h, kind, cfg.Name),
		inner:      AsInner(inner),
		beh:        beh,
		hold:       cfg.HoldUntilOutcome,
		callerPath: cfg.CallerPath,
		roots:      rootPool[Req, Res](),
		parkedDone: &parkedCtxDone{},
		done:       make(chan struct{}),
	}
	if a, ok := s.inner.(*adapter[Req, Res]); ok {
		a.log = host.sys.logger
	}
	if cfg.Inline == 0 {
		cfg.Inline = defaultInline
	}
	if cfg.MaxWait < 0 {
		return nil, &troupe.ConfigError{Stage: cfg.Name, Option: "MaxWait", Value: cfg.MaxWait, Why: "negative"}
	}
	mb, err := mailbox.New(cfg.Capacity, mailbox.OnDropped(s.dropped), mailbox.OnPanic(s.panicked),
		mailbox.Inline(max(cfg.Inline, 0)), mailbox.Direct(s.direct),
		mailbox.MaxWait(cfg.MaxWait, &WaitError{Stage: cfg.Name, MaxWait: cfg.MaxWait}))
	if err != nil {
		return nil, &troupe.ConfigError{Stage: cfg.Name, Option: "Capacity", Value: cfg.Capacity, Why: "the mailbox refused it", Err: err}
	}
	s.mb = mb
	switch s.inner.(type) {
	case *stageInner[Req, Res], *funcInner[Req, Res]:
	default:
		s.callerPath = false // a service whose readiness may block or panic: only the actor asks it
	}
	s.callerPath = s.callerPath && s.obs == nil
	s.onCaller.Store(s.callerPath)
	s.hooks = hooksOf(beh, s.callerPath)
	s.waiter, s.grant = s.newWaiter(s.inner)
	s.watchFn = func() { s.mb.PostControl(s.parkedDone) }
	props := actor.PropsFromProducer(func() actor.Actor { return (*stageActor[Req, Res])(s) }, actor.WithMailbox(mb.Producer()))
	pid, err := host.spawn(props, cfg.Name, s)
	if err != nil {
		return nil, err
	}
	s.pid = pid
	return s, nil
}

// Name returns the stage's name.
func (s *Stage[Req, Res]) Name() string { return s.name }

// Inner returns the service the stage hands requests on to.
func (s *Stage[Req, Res]) Inner() Inner[Req, Res] { return s.inner }

// Done is closed once the stage's actor has stopped.
func (s *Stage[Req, Res]) Done() <-chan struct{} { return s.done }

// PostControl queues a control message for the stage's behavior. The
// control queue has no limit of its own: it is bounded by construction, as
// long as every message answers one event the stage already counts (an
// outcome of a request it holds or has in flight, a waiter's grant, a
// timer firing, a context that ended): then it holds at most a few
// messages per such request and timer, the bound the stages troupe ships
// keep to. Post nothing per unit of time or per retry of your own.
func (s *Stage[Req, Res]) PostControl(msg any) { s.mb.PostControl(msg) }

// closedError is what requests get once the stage closed: why, if it failed.
func (s *Stage[Req, Res]) closedError(cause error) error {
	return &troupe.ClosedError{Service: s.name, Cause: cause}
}

// stageActor is the protoactor side of a Stage: the same memory, with the
// actor.Actor method.
type stageActor[Req, Res any] Stage[Req, Res]

func (a *stageActor[Req, Res]) Receive(c actor.Context) {
	s := (*Stage[Req, Res])(a)
	s.ctx = c
	switch m := c.Message().(type) {
	case *actor.Started:
		s.actx = c // the same context for the actor's whole life, restarts included
	case *actor.Restarting:
		s.onRestarting()
	case *actor.Stopped:
		s.onStopped()
	case *actor.Stopping, *actor.Restart:
	default:
		s.handle(m)
	}
	if s.closing != open {
		s.maybeStop()
	}
	s.updatePath()
}

// direct is the mailbox's direct handler (mailbox.Direct): the stage's own
// messages skip protoactor's per-message dispatch. It declines until the
// actor has started (and so has its context).
func (s *Stage[Req, Res]) direct(msg any) bool {
	if s.actx == nil {
		return false
	}
	s.ctx = s.actx
	s.handle(msg)
	if s.closing != open {
		s.maybeStop()
	}
	s.updatePath()
	return true
}
