package hedge

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/ilist"
	"github.com/troupe-go/troupe/internal/line"
)

// Hedge is a running hedging stage: a troupe.Service and a troupe.Closer.
// It is safe for concurrent use.
type Hedge[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	b *behavior[Req, Res]
}

// Counts is a snapshot of a hedging stage (its Stats' Detail).
//
// A plain value, safe for concurrent use.
type Counts struct {
	Sessions int    // requests in the stage now
	Hedges   uint64 // hedges sent
	Won      uint64 // requests whose outcome came from a hedge
	Refused  uint64 // hedges the budget refused
	Samples  int    // latency samples in the window (0 without Percentile)
	Budget   int64  // hedges the budget affords now; -1 with NoBudget
}

// New spawns a hedging stage over inner in host h (nil is an error). A bad
// option is a *troupe.ConfigError naming the option (it matches
// troupe.ErrBadConfig); nothing is spawned then.
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], opts ...Option[Req, Res]) (*Hedge[Req, Res], error) {
	cfg, err := compile[Req, Res](opts)
	if err != nil {
		return nil, err
	}
	b := &behavior[Req, Res]{cfg: cfg, children: stagekit.NewPool[Req, Res](), clock: stagekit.NewClock()}
	if cfg.minSamples > 0 {
		b.win = newWindow(cfg.span, cfg.samples, b.clock.Now())
	}
	b.sessions.New = func() any {
		ss := &session[Req, Res]{b: b, atts: make([]attempt[Req, Res], 1+cfg.maxHedges)}
		for i := range ss.atts {
			ss.atts[i].ss, ss.atts[i].n = ss, i
		}
		return ss
	}
	st, err := stagekit.Spawn[Req, Res](h, stagekit.Config{Name: "hedge", Capacity: cfg.capacity}, inner, b)
	if err != nil {
		return nil, fmt.Errorf("hedge: %w", err)
	}
	b.st = st
	b.alarm = st.NewAlarm(tickMsg{})
	b.line.Init(func(err error) { st.PostControl(&grantMsg{err: err}) })
	x := &Hedge[Req, Res]{b: b}
	x.Handle = stagekit.NewHandle(st, nil)
	return x, nil
}

// Layer returns a layer that hedges the requests to the service inside it.
func Layer[Req, Res any](opts ...Option[Req, Res]) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New(h, inner, opts...)
	})
}

// Counts returns the stage's counters now.
func (x *Hedge[Req, Res]) Counts() Counts { return x.b.counts() }

// Detail is the stage's Stats' Detail: its Counts (stagekit.Detailer).
func (b *behavior[Req, Res]) Detail() any { return b.counts() }

func (b *behavior[Req, Res]) counts() Counts {
	now := time.Now()
	c := Counts{Sessions: b.count(), Hedges: b.hedges.Load(), Won: b.won.Load(), Refused: b.refused.Load(), Budget: -1}
	if b.win != nil {
		c.Samples = b.win.count(now)
	}
	if b.cfg.budget != nil {
		c.Budget = b.cfg.budget.RemainingAt(now)
	}
	return c
}

// Delay returns the delay a request sent now would wait before its first
// hedge, and false when it would not be hedged (Percentile alone, with too
// few samples yet).
func (x *Hedge[Req, Res]) Delay() (time.Duration, bool) { return x.b.delayAt(time.Now()) }

// behavior runs the sessions of one hedging stage. Its fields marked
// "actor" are owned by the stage's actor; the live and pending lists, and
// the sessions' state, are shared with the goroutines that complete
// attempts, under mu.
type behavior[Req, Res any] struct {
	cfg      config[Req, Res]
	win      *window // nil without Percentile
	clock    stagekit.Clock
	st       *stagekit.Stage[Req, Res]
	alarm    *stagekit.Alarm // set for the first pending hedge; one for the stage
	children *sync.Pool      // attempt envelopes
	sessions sync.Pool

	hedges, won, refused atomic.Uint64

	// mu guards the two lists, and the state of the sessions (see session),
	// so that the outcome that ends one takes a single lock.
	mu   sync.Mutex
	live ilist.List[session[Req, Res]] // sessions in flight, the latest first; guarded by mu
	// Sessions until their next hedge, by due time; guarded by mu. A
	// session that ends leaves it at once (finish), so that it can be
	// reused: a request answered before its delay costs no timer and
	// leaves nothing behind.
	pending pendingList[Req, Res]

	alarmAt time.Time                               // actor; when the alarm is armed for, zero when it is not
	slab    *ctxSlab                                // actor; where attempt contexts are carved from
	line    line.Line[Req, Res, *session[Req, Res]] // actor; sessions waiting for an inner unit

	breaking *session[Req, Res] // actor; while broken closes the stage, the session answered with breakErr
	breakErr error              // actor
}

// delayAt is the delay of a request sent at now, if it is hedged.
func (b *behavior[Req, Res]) delayAt(now time.Time) (time.Duration, bool) {
	if b.cfg.delays != nil {
		return b.cfg.delays[0], true
	}
	if b.win != nil {
		if d, _, ok := b.win.percentile(now, b.cfg.pct, b.cfg.minSamples); ok {
			return d, true
		}
	}
	return b.cfg.fixed, b.cfg.hasFixed
}

func (b *behavior[Req, Res]) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.live.Len()
}

// pendingCount returns how many sessions wait for their next hedge's time.
func (b *behavior[Req, Res]) pendingCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pending.len()
}

// newCtx returns a context for an attempt of a request whose context is
// parent, carved from the stage's slab (actor).
func (b *behavior[Req, Res]) newCtx(parent context.Context) *attemptCtx {
	c := b.slab.take(parent)
	if c == nil {
		b.slab = new(ctxSlab)
		c = b.slab.take(parent)
	}
	return c
}

// Request starts a session for a request taken from the mailbox: it
// deposits into the budget and sends the original attempt as soon as the
// inner service grants a unit (at once when it is ready and nobody is in
// line; otherwise in line, see queue). The clock is read once, for both.
func (b *behavior[Req, Res]) Request(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	ss := b.sessions.Get().(*session[Req, Res])
	ss.start(e)
	now := b.clock.Now()
	if b.cfg.budget != nil {
		b.cfg.budget.DepositAt(now)
	}
	// The inner service is asked before the stage keeps e: should its
	// readiness panic, the stage answers e itself, and ss is never used.
	var ok bool
	var err error
	if b.line.Len() == 0 {
		ok, err = b.st.Inner().TryReserve()
	}
	s.Keep(e) // Fail answers it from now on, through ss, which goes live before anything can fail
	if ok && err == nil {
		ss.sendOriginal(now, true)
		return
	}
	ss.goLive(1) // the session's own reference
	b.mu.Lock()
	b.live.PushFront(ss, &ss.live)
	b.mu.Unlock()
	if err != nil {
		b.broken(ss, err)
		return
	}
	b.queue(ss)
}

// Idle reports whether no session is in flight.
func (b *behavior[Req, Res]) Idle() bool { return b.count() == 0 }

// Fail ends every session in flight with err (the stage restarts or
// stops): their attempts' contexts are cancelled, their later outcomes
// discarded. When the inner service broke, only the sessions whose
// original was never sent end so; the others send no more hedges and end
// with their attempts' outcomes.
func (b *behavior[Req, Res]) Fail(s *stagekit.Stage[Req, Res], err error) {
	b.alarm.Stop()
	b.alarmAt = time.Time{}
	b.mu.Lock()
	var unlisted []*session[Req, Res]
	for ss := b.pending.first(); ss != nil; ss = b.pending.first() {
		b.pending.remove(ss)
		unlisted = append(unlisted, ss)
	}
	b.mu.Unlock()
	for _, ss := range unlisted {
		ss.unref() // the pending list's reference
	}
	queued := b.line.Clear(s) // a grant on its way is given back when it comes
	for _, ss := range queued {
		ss.stopWatch()
		ss.setQueued(false)
		ss.unref()
	}
	clear(queued)
	s.PauseRequests(false)
	b.mu.Lock()
	var live []*session[Req, Res]
	for ss := b.live.Front(); ss != nil; ss = b.live.Next(&ss.live) {
		live = append(live, ss)
	}
	b.mu.Unlock()
	broken := s.Broken()
	for _, ss := range live {
		if broken && ss.sent > 0 {
			// The inner service broke: no hedge goes, and the attempts
			// sent end the session with their own outcomes.
			b.mu.Lock()
			ss.noMore = true
			b.mu.Unlock()
			continue
		}
		cause := err
		if ss == b.breaking {
			cause = b.breakErr
		}
		ss.end(nil, *new(Res), cause)
	}
}

// Dropped handles the stage's own messages once it has stopped: Fail ended
// every session, so only a unit the inner service granted too late
// matters, and it is given back (the inner service never changes, so
// reading it off the actor is safe).
func (b *behavior[Req, Res]) Dropped(msg any, _ error) {
	if g, ok := msg.(*grantMsg); ok && g.err == nil {
		b.st.Inner().Unreserve()
	}
}
