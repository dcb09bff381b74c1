package hedge

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// session is one request with its attempts: the original and its hedges.
// The stage holds the request (and its slot) until the session ends, once:
// the first final outcome, the last outcome when none was final, a failure
// of the stage, or the caller leaving while the original waited for a unit.
// Whoever ends it sets done under mu; from then on no attempt is sent and
// every later outcome is discarded.
type session[Req, Res any] struct {
	b    *behavior[Req, Res]
	atts []attempt[Req, Res] // 1+maxHedges, made once per pooled session
	refs atomic.Int32        // 1 until the session ends, +1 per attempt in flight, per heap or line entry

	// Set by start on the actor, then read-only until the session is reused.
	gen    uint64                       // bumped at every reuse: stale messages are ignored
	parent *stagekit.Envelope[Req, Res] // the request; the stage holds it until the session ends
	req    Req
	ctx    context.Context // the request's context

	mu      sync.Mutex
	done    atomic.Bool   // the session has its outcome; set under mu
	running int           // attempts sent whose outcome has not come; guarded by mu
	sent    int           // attempts sent, the original included; changed by the actor under mu
	noMore  bool          // send no further hedge; guarded by mu
	queued  bool          // in b.needUnit; guarded by mu
	delay   time.Duration // between attempts; set by the actor under mu with the original

	// Actor-owned.
	due     time.Time   // when the next hedge is due
	idx     int         // place in b.waits, -1 when not there
	unwatch func() bool // stops watching the request's context while the original waits

	prev, next *session[Req, Res] // live list; guarded by b.mu
}

// attempt is one send of the request: its hook and its context.
type attempt[Req, Res any] struct {
	ss   *session[Req, Res]
	n    int         // 0: the original; k: the k-th hedge
	sent time.Time   // set when sent
	ctx  *attemptCtx // nil when the session cannot hedge (the request's own context)
}

// start readies a pooled session for request e (actor).
func (ss *session[Req, Res]) start(e *stagekit.Envelope[Req, Res]) {
	ss.gen++
	ss.parent, ss.req, ss.ctx = e, e.Req, e.Ctx
	ss.done.Store(false)
	ss.running, ss.sent, ss.noMore, ss.queued, ss.delay = 0, 0, false, false, 0
	ss.refs.Store(1)
}

// Complete is the hook of an attempt's first frame: the attempt's outcome,
// where it was produced. A success is a latency sample; the first final
// outcome ends the session, as does the last one when none was final.
func (a *attempt[Req, Res]) Complete(_ *stagekit.Envelope[Req, Res], _ *stagekit.Frame[Req, Res], res Res, err error) (Res, error, bool) {
	ss := a.ss
	defer ss.unref()
	b := ss.b
	if err == nil && b.win != nil {
		now := time.Now()
		b.win.record(now, now.Sub(a.sent))
	}
	if ss.done.Load() {
		return res, err, false // a loser's late outcome: discarded
	}
	final, perr := stagekit.Guard1("hedge: Final", func() (bool, error) { return b.cfg.final(res, err), nil })
	if perr != nil {
		var zero Res
		res, err, final = zero, perr, true
	}
	ss.mu.Lock()
	if ss.done.Load() {
		ss.mu.Unlock()
		return res, err, false
	}
	ss.running--
	if !final && ss.running > 0 {
		ss.mu.Unlock() // another attempt may still do better
		return res, err, false
	}
	sent, queued := ss.settleLocked()
	ss.mu.Unlock()
	ss.finish(a, res, err, sent, queued)
	return res, err, false
}

// end ends the session with an outcome unless it has one already, and
// reports whether it did. winner is the attempt whose outcome it is, nil
// for an outcome of the stage's own.
func (ss *session[Req, Res]) end(winner *attempt[Req, Res], res Res, err error) bool {
	ss.mu.Lock()
	if ss.done.Load() {
		ss.mu.Unlock()
		return false
	}
	sent, queued := ss.settleLocked()
	ss.mu.Unlock()
	ss.finish(winner, res, err, sent, queued)
	return true
}

// settleLocked marks the session done (mu held) and returns what finish
// needs: the attempts sent, which no longer change, and whether it waits
// in line for a unit.
func (ss *session[Req, Res]) settleLocked() (sent int, queued bool) {
	ss.done.Store(true)
	return ss.sent, ss.queued
}

// finish delivers the session's outcome, once: the other attempts'
// contexts are cancelled first (the winner's is only unlinked: its
// response may still need it), then the request is answered and its slot
// freed.
func (ss *session[Req, Res]) finish(winner *attempt[Req, Res], res Res, err error, sent int, queued bool) {
	b := ss.b
	for i := range sent {
		a := &ss.atts[i]
		switch {
		case a.ctx == nil:
		case a == winner:
			a.ctx.release()
		default:
			a.ctx.cancel(context.Canceled)
		}
	}
	if queued {
		b.st.PostControl(&unqueueMsg[Req, Res]{ss: ss, gen: ss.gen})
	}
	if winner != nil && winner.n > 0 {
		b.won.Add(1)
	}
	b.mu.Lock()
	b.live.remove(ss)
	idle := b.live.n == 0
	b.mu.Unlock()
	b.st.Respond(ss.parent, res, err)
	if idle {
		b.st.Recheck() // a draining stage may stop now
	}
	ss.unref()
}

func (ss *session[Req, Res]) unref() {
	if ss.refs.Add(-1) != 0 {
		return
	}
	var zero Req
	ss.parent, ss.req, ss.ctx = nil, zero, nil
	for i := range ss.atts {
		ss.atts[i].ctx = nil
	}
	ss.b.sessions.Put(ss)
}

func (ss *session[Req, Res]) setQueued(q bool) {
	ss.mu.Lock()
	ss.queued = q
	ss.mu.Unlock()
}

// watch ends the session when the request's context ends while its
// original waits for a unit (actor): nothing else would notice.
func (ss *session[Req, Res]) watch() {
	if ss.unwatch != nil || ss.ctx.Done() == nil {
		return
	}
	msg := &cancelMsg[Req, Res]{ss: ss, gen: ss.gen}
	st := ss.b.st
	ss.unwatch = context.AfterFunc(ss.ctx, func() { st.PostControl(msg) })
}

func (ss *session[Req, Res]) stopWatch() {
	if ss.unwatch != nil {
		ss.unwatch()
		ss.unwatch = nil
	}
}

// sessionList is an intrusive list of sessions.
type sessionList[Req, Res any] struct {
	head *session[Req, Res]
	n    int
}

func (l *sessionList[Req, Res]) push(ss *session[Req, Res]) {
	ss.prev, ss.next = nil, l.head
	if l.head != nil {
		l.head.prev = ss
	}
	l.head = ss
	l.n++
}

func (l *sessionList[Req, Res]) remove(ss *session[Req, Res]) {
	if ss.prev != nil {
		ss.prev.next = ss.next
	} else {
		l.head = ss.next
	}
	if ss.next != nil {
		ss.next.prev = ss.prev
	}
	ss.prev, ss.next = nil, nil
	l.n--
}
