package loadshed

import (
	"github.com/troupe-go/troupe/actors/stagekit"
)

// The stagekit.Inner side of a LoadShed, used by the stage outside it. A
// LoadShed is always ready there too: a unit is "reserved" without taking
// anything, and Send decides, without waiting, whether the request enters
// the stage or is shed. NOTE: Send relies on stagekit.Stage.Send expecting a
// slot reserved in the stage's mailbox (actors/handle.go).

// shedInner is the LoadShed seen by the stage outside it.
type shedInner[Req, Res any] LoadShed[Req, Res]

// TryReserve reports ready without taking a slot; once the stage is closed
// it returns the close error, so the outer stage stops using it.
func (l *shedInner[Req, Res]) TryReserve() (bool, error) {
	if err := l.st.ClosedErr(); err != nil {
		return false, err
	}
	return true, nil
}

// ReserveAsync is TryReserve: a LoadShed never puts a waiter in line.
func (l *shedInner[Req, Res]) ReserveAsync(*stagekit.Waiter) (bool, error) { return l.TryReserve() }

// CancelWait reports false: no waiter is ever in line.
func (l *shedInner[Req, Res]) CancelWait(*stagekit.Waiter) bool { return false }

// Unreserve does nothing: TryReserve took nothing.
func (l *shedInner[Req, Res]) Unreserve() {}

// Send takes a slot in the stage without waiting and sends e into it, or,
// when the stage is full (for e's priority), answers e with ErrOverloaded
// at once; once
// the stage is closed, e is answered with the close error.
func (l *shedInner[Req, Res]) Send(e *stagekit.Envelope[Req, Res]) {
	ok, err := (*LoadShed[Req, Res])(l).tryReserve(e.Ctx)
	if ok {
		l.st.ActorsInner().Send(e)
		return
	}
	if err == nil {
		err = (*LoadShed[Req, Res])(l).shedErr(e.Ctx)
	} else {
		err = l.st.Rejected(err) // closed
	}
	var zero Res
	e.Answer(zero, err)
}
