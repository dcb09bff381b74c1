package retry

import (
	"fmt"
	"sync"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/dheap"
	"github.com/troupe-go/troupe/internal/ilist"
	"github.com/troupe-go/troupe/internal/line"
	"github.com/troupe-go/troupe/internal/opt"
	"github.com/troupe-go/troupe/stages/retry/budget"
)

// Retry is a running retry stage: a troupe.Service and a troupe.Closer.
// It is safe for concurrent use.
type Retry[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	b counted // the behavior, whatever its policy type
}

// counted is the behavior seen from its stage type, which has no policy
// type parameter.
type counted interface {
	snapshot() Sessions
	pool() *sync.Pool // the sessions (a test counts those it makes)
}

// Sessions is a snapshot of a retry stage's sessions (its Stats' Detail).
//
// A plain value, safe for concurrent use.
type Sessions struct {
	Sessions int // in flight
	Waiting  int // waiting before their next attempt
	Retrying int // waiting for the inner service's readiness to retry
}

// Sessions returns the current counts.
func (r *Retry[Req, Res]) Sessions() Sessions { return r.b.snapshot() }

// Option configures a Retry.
//
// Options are plain values, safe for concurrent use.
type Option func(*options)

type options struct {
	capacity  int
	budget    *budget.Budget
	budgetSet bool
	panics    bool
}

// Capacity sets how many sessions may be in flight at once: the stage's
// mailbox capacity. The default, 0, sets no limit of its own: the stage
// admits as many sessions as the stages outside it admit.
func Capacity(n int) Option { return func(o *options) { o.capacity = n } }

// WithBudget makes every session deposit into b when it starts and withdraw
// from it before each retry; a session whose budget is spent returns its
// last outcome. Share one budget by pointer between stages if you
// want one budget for several. A nil b is New's error.
func WithBudget(b *budget.Budget) Option {
	return func(o *options) { o.budget, o.budgetSet = b, true }
}

// RetryPanics makes the stage's Attempts policy (or a policy embedding
// it: troupehttp's, troupegrpc's) retry panics (troupe.ErrPanic) as its
// Retryable says, as Attempts.RetryPanics does; by default a panic is
// never retried. With a policy of another kind it is New's error.
func RetryPanics() Option { return func(o *options) { o.panics = true } }

// policyPtr is the pointer to a policy value T that implements Policy.
type policyPtr[Req, Res, T any] interface {
	*T
	Policy[Req, Res]
}

// New spawns a retry stage over inner in host h (nil is an error). Every
// session starts from its own copy of proto. A bad configuration is an error
// matching troupe.ErrBadConfig: ErrBadCapacity, or one for an Attempts
// policy with a negative Max.
func New[Req, Res, T any, P policyPtr[Req, Res, T]](h troupe.Host, inner troupe.Service[Req, Res], proto T, opts ...Option) (*Retry[Req, Res], error) {
	o := options{}
	if err := opt.Apply("retry", &o, opts); err != nil {
		return nil, err
	}
	if o.budgetSet && o.budget == nil {
		return nil, opt.Nil("retry", "WithBudget's budget")
	}
	if _, err := stagekit.CheckCapacity("retry", o.capacity); err != nil {
		return nil, err
	}
	// The policy is checked as the behaviour's own copy: checked as the
	// parameter, it would escape to the heap, a copy made for nothing.
	b := &behavior[Req, Res, T, P]{proto: proto, budget: o.budget}
	var err error
	if b.bind, err = checkPolicy[Req, Res, T, P](&b.proto); err != nil {
		return nil, err
	}
	if o.panics {
		ap, ok := any(P(&b.proto)).(attemptsPolicy)
		if !ok {
			return nil, opt.Bad("retry", "RetryPanics", fmt.Sprintf("%T", b.proto), "needs an Attempts policy (or one embedding it)")
		}
		ap.retryPanics()
	}
	_, b.builtin = any(P(&b.proto)).(*Attempts[Req, Res])
	b.attempts = stagekit.NewPool[Req, Res]()
	const name = "retry"
	b.sessions.New = func() any {
		ss := &session[Req, Res, T, P]{b: b}
		ss.orig.ss = ss
		return ss
	}
	st, err := stagekit.Spawn[Req, Res](h, stagekit.Config{Name: name, Capacity: o.capacity, CallerPath: true}, inner, b)
	if err != nil {
		return nil, fmt.Errorf("retry: spawn: %w", err)
	}
	b.st = st
	b.alarm = st.NewAlarm(tickMsg{})
	b.line.Init(func(err error) { st.PostControl(&grantMsg{err: err}) })
	return &Retry[Req, Res]{Handle: stagekit.NewHandle(st, nil), b: b}, nil
}

// Layer returns a layer that retries requests to the service inside it
// according to proto's policy.
func Layer[Req, Res, T any, P policyPtr[Req, Res, T]](proto T, opts ...Option) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New[Req, Res, T, P](h, inner, proto, opts...)
	})
}

// behavior runs the sessions of one retry stage. The fields marked "actor"
// are owned by the stage's actor goroutine; the live list is shared with the
// goroutines that complete attempts, under mu.
type behavior[Req, Res, T any, P policyPtr[Req, Res, T]] struct {
	proto    T
	bind     bool   // proto is an Attempts: sessions bind their copies
	builtin  bool   // proto is exactly an Attempts, whose methods guard the user's functions themselves
	waitSeq  uint32 // actor; numbers the waits, for sessions whose waits end at one instant (in the bools' padding)
	budget   *budget.Budget
	st       *stagekit.Stage[Req, Res]
	alarm    *stagekit.Alarm
	attempts *sync.Pool // attempt envelopes
	sessions sync.Pool

	mu   sync.Mutex
	live ilist.List[session[Req, Res, T, P]] // sessions in flight, the latest first; guarded by mu

	waits dheap.Heap[*session[Req, Res, T, P]]          // actor; sessions waiting for a time, by its end
	line  line.Line[Req, Res, *session[Req, Res, T, P]] // actor; sessions waiting for an inner unit

	breaking *breaking[Req, Res, T, P] // actor; set only while broken closes the stage
}

// breaking is the session that broken answers with the inner service's
// error itself, while it closes the stage (Fail answers it with err, not
// with the closed error). Made only when the inner service breaks, so that
// the behaviour stays in a smaller size class.
type breaking[Req, Res, T any, P policyPtr[Req, Res, T]] struct {
	ss  *session[Req, Res, T, P]
	err error
}

func (b *behavior[Req, Res, T, P]) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.live.Len()
}

func (b *behavior[Req, Res, T, P]) pool() *sync.Pool { return &b.sessions }

// Detail is the stage's Stats' Detail: its Sessions (stagekit.Detailer).
func (b *behavior[Req, Res, T, P]) Detail() any { return b.snapshot() }

func (b *behavior[Req, Res, T, P]) snapshot() Sessions {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Sessions{Sessions: b.live.Len()}
	for ss := b.live.Front(); ss != nil; ss = b.live.Next(&ss.live) {
		switch ss.state.Load() {
		case waiting:
			s.Waiting++
		case retrying:
			s.Retrying++
		}
	}
	return s
}

// Request starts a session for a request taken from the mailbox: the
// policy copy comes first, before any policy method runs; then the request
// is copied for a later attempt (a panic in that ends the session at once).
func (b *behavior[Req, Res, T, P]) Request(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	ss := b.sessions.Get().(*session[Req, Res, T, P])
	ss.start(e, b.proto)
	if b.budget != nil {
		b.budget.Deposit()
	}
	b.mu.Lock()
	b.live.PushFront(ss, &ss.live)
	b.mu.Unlock()
	s.Keep(e) // Fail answers it from now on
	var err error
	if ss.req, ss.again, err = ss.clone(&e.Req); err != nil {
		var zero Res
		ss.finish(zero, err)
		return
	}
	b.retrying(ss)
}

// RequestOnCaller starts a session on the sender's goroutine, with an
// inner unit reserved for its first attempt (stagekit.CallerRequester):
// what Request does, and the first attempt sent at once. Its outcome and
// any retry are the actor's, as for every session.
func (b *behavior[Req, Res, T, P]) RequestOnCaller(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) bool {
	ss := b.sessions.Get().(*session[Req, Res, T, P])
	ss.start(e, b.proto)
	if b.budget != nil {
		b.budget.Deposit()
	}
	var err error
	if ss.req, ss.again, err = ss.clone(&e.Req); err != nil {
		s.Inner().Unreserve()
		b.mu.Lock()
		b.live.PushFront(ss, &ss.live)
		b.mu.Unlock()
		var zero Res
		ss.finish(zero, err)
		return true
	}
	ss.sendFrom(true)
	return true
}

// Ordinary reports whether no session waits in line for an inner unit
// (stagekit.CallerRequester): a new request must not go before them.
func (b *behavior[Req, Res, T, P]) Ordinary() bool { return b.line.Idle() }

// Idle reports whether no session is in flight.
func (b *behavior[Req, Res, T, P]) Idle() bool { return b.count() == 0 }

// Fail ends every session in flight with err: the stage restarts or stops.
// When the inner service broke, a session whose attempt is running goes on:
// its outcome is final unless the policy retries, and a retry then meets
// the broken service (retrying) and ends with its error.
func (b *behavior[Req, Res, T, P]) Fail(s *stagekit.Stage[Req, Res], err error) {
	b.alarm.Stop()
	b.waits.Clear()
	clear(b.line.Clear(s)) // a grant on its way is given back when it comes
	var zero Res
	if s.Broken() {
		// Only the actor moves a session out of waiting or retrying: those
		// listed stay valid until it finishes them.
		var held []*session[Req, Res, T, P]
		b.mu.Lock()
		for ss := b.live.Front(); ss != nil; ss = b.live.Next(&ss.live) {
			if ss.state.Load() != running {
				held = append(held, ss)
			}
		}
		b.mu.Unlock()
		for _, ss := range held {
			ss.finish(zero, b.failErr(ss, err))
		}
		return
	}
	for {
		b.mu.Lock()
		ss := b.live.Front()
		b.mu.Unlock()
		if ss == nil {
			return
		}
		ss.finish(zero, b.failErr(ss, err))
	}
}

// failErr is the outcome Fail gives ss: the readiness error itself for the
// session that met it (see broken), err for the others.
func (b *behavior[Req, Res, T, P]) failErr(ss *session[Req, Res, T, P], err error) error {
	if br := b.breaking; br != nil && ss == br.ss {
		return br.err
	}
	return err
}

// Dropped handles the stage's own messages once it has stopped: Fail ended
// every session first, so only a unit the inner service granted too late
// matters, and it is given back (the inner service never changes, so
// reading it off the actor is safe).
func (b *behavior[Req, Res, T, P]) Dropped(msg any, _ error) {
	if g, ok := msg.(*grantMsg); ok && g.err == nil {
		b.st.Inner().Unreserve()
	}
}
