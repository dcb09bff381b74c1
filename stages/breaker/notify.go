package breaker

import (
	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// notice is a change of state waiting for OnStateChange, with the outcome
// of the call that made it, if one did: the call gets it once the callback
// has run.
type notice[Req, Res any] struct {
	Transition
	e   *stagekit.Envelope[Req, Res] // referenced until the outcome goes on; nil when no call made the change
	pos int                          // the stage's frame on e
	res Res
	err error
}

// notify runs OnStateChange, and tells the observer (EventStateChanged),
// for the queued changes, in order, on a goroutine of its own, which ends
// when none is left: neither ever runs on an actor, nor under the
// breaker's lock, and one that blocks holds up only the call whose outcome
// made its change (and the changes after it). A panic in either is that
// call's outcome; for a change no call made, it is logged.
func (b *behavior[Req, Res]) notify() {
	for {
		b.mu.Lock()
		if len(b.notices) == 0 {
			b.notices, b.notifying = nil, false
			b.mu.Unlock()
			return
		}
		n := b.notices[0]
		b.notices[0] = notice[Req, Res]{}
		b.notices = b.notices[1:]
		b.mu.Unlock()

		var perr, oerr error
		if b.o.onChange != nil {
			perr = stagekit.Guard("breaker: OnStateChange", func() { b.o.onChange(n.From, n.To) })
		}
		if b.o.onTrans != nil {
			if terr := stagekit.Guard("breaker: OnTransition", func() { b.o.onTrans(n.Transition) }); perr == nil {
				perr = terr
			}
		}
		if b.rep != nil { // a panic is logged by Report
			oerr = b.rep.Report(troupe.Event{Type: troupe.EventStateChanged, From: n.From.String(), To: n.To.String()})
		}
		switch {
		case n.e != nil:
			err := n.err
			if perr != nil {
				err = withPanic(perr, err)
			}
			if oerr != nil {
				err = withPanic(oerr, err)
			}
			n.e.CompleteAt(n.pos-1, n.res, err)
			n.e.Unref()
		case perr != nil:
			b.log.Error("breaker: OnStateChange panicked", "stage", b.st.Name(), "err", perr)
		}
	}
}
