// Package line is a stage's line of waiters for a unit of its inner
// service: the one way Retry and Hedge wait in line. Its first in line is
// served first; while anyone is in line the stage takes no new request
// (its intake is paused), so nobody overtakes the line; the stage's one
// stagekit.Waiter is in the inner service's own line at most once.
package line

import (
	"slices"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// Owner is the stage whose line it is: it spends the units the line wins
// and hears the inner service's readiness error. Its methods run on the
// stage's actor, from the Line's.
type Owner[T any] interface {
	// SpendUnit is given the first in line with a unit of the inner
	// service reserved for it.
	SpendUnit(t T)
	// InnerBroken is told the inner service's readiness error, with the
	// first in line, which left the line, when ok.
	InnerBroken(t T, ok bool, err error)
	// Unneeded reports that t no longer needs a unit; the line drops it on
	// its way to the front and gives it to LeftLine.
	Unneeded(t T) bool
	// LeftLine is given what left the line without a unit by Unneeded.
	LeftLine(t T)
}

// Line is a stage's line of waiters for an inner unit. It belongs to the
// stage's actor: every method runs there. The zero Line is not ready: Init
// gives it the stage's waiter, whose grant the stage hands to Granted.
type Line[Req, Res any, T comparable] struct {
	items []T // first in line first
	w     *waiter
}

// waiter is the line's one wait in the inner service's line. Its flag sits
// beside the stagekit.Waiter, not in the Line, so that a Line costs the
// stage's struct no more than the slice and the pointer it replaces.
type waiter struct {
	stagekit.Waiter
	waiting bool // actor: in the inner service's line, or its grant on its way
}

// Init makes the line's waiter (before Init, the line is idle and takes
// nobody): grant posts the inner service's grant (or
// readiness error) to the stage's actor, which passes it to Granted.
func (l *Line[Req, Res, T]) Init(grant func(error)) {
	l.w = &waiter{Waiter: *stagekit.NewWaiter(grant)}
}

// Len is how many wait in line.
func (l *Line[Req, Res, T]) Len() int { return len(l.items) }

// Idle reports whether nobody is in line and the waiter is not in the
// inner service's line (no grant is on its way).
func (l *Line[Req, Res, T]) Idle() bool { return len(l.items) == 0 && (l.w == nil || !l.w.waiting) }

// Push puts t last in line, pauses the stage's intake, and asks the inner
// service for a unit if the line had not.
func (l *Line[Req, Res, T]) Push(st *stagekit.Stage[Req, Res], o Owner[T], t T) {
	l.items = append(l.items, t)
	st.PauseRequests(true)
	l.ask(st, o)
}

// Granted handles the waiter's grant: the unit goes to the first in line
// still in it (or back to the inner service when none is), and the line
// asks again for the next; an error goes to the owner with the first in
// line.
func (l *Line[Req, Res, T]) Granted(st *stagekit.Stage[Req, Res], o Owner[T], err error) {
	l.w.waiting = false
	if err != nil {
		t, ok := l.pop(st, o)
		o.InnerBroken(t, ok, err)
		return
	}
	l.spendNext(st, o)
	l.ask(st, o)
}

// Remove takes t out of the line and reports whether it was there. With
// nobody left in line, the stage's intake resumes and the waiter leaves the
// inner service's line (a grant already on its way is given back when it
// comes).
func (l *Line[Req, Res, T]) Remove(st *stagekit.Stage[Req, Res], t T) bool {
	for i, x := range l.items {
		if x != t {
			continue
		}
		l.items = slices.Delete(l.items, i, i+1)
		if len(l.items) == 0 {
			st.PauseRequests(false)
			l.cancelWait(st)
		}
		return true
	}
	return false
}

// Clear empties the line (the stage fails) and returns what was in it, for
// the owner to answer; the waiter leaves the inner service's line where it
// can. The stage's intake is left as it is. The slice is valid until the
// line's next Push.
func (l *Line[Req, Res, T]) Clear(st *stagekit.Stage[Req, Res]) []T {
	items := l.items
	l.items = l.items[:0]
	l.cancelWait(st)
	return items
}

// ask puts the waiter in the inner service's line, once, spending the
// units the inner service grants at once.
func (l *Line[Req, Res, T]) ask(st *stagekit.Stage[Req, Res], o Owner[T]) {
	for !l.w.waiting && len(l.items) > 0 {
		granted, err := st.Inner().ReserveAsync(&l.w.Waiter)
		if err != nil {
			t, ok := l.pop(st, o)
			o.InnerBroken(t, ok, err)
			return
		}
		if !granted {
			l.w.waiting = true
			return
		}
		l.spendNext(st, o)
	}
}

// spendNext spends a unit in hand on the first in line, or gives it back.
func (l *Line[Req, Res, T]) spendNext(st *stagekit.Stage[Req, Res], o Owner[T]) {
	t, ok := l.pop(st, o)
	if !ok {
		st.Inner().Unreserve()
		return
	}
	o.SpendUnit(t)
}

// pop takes the first in line that still needs a unit, dropping those that
// no longer do; the stage's intake resumes when the line empties.
func (l *Line[Req, Res, T]) pop(st *stagekit.Stage[Req, Res], o Owner[T]) (t T, ok bool) {
	var zero T
	for len(l.items) > 0 {
		t = l.items[0]
		l.items[0] = zero
		l.items = l.items[1:]
		if !o.Unneeded(t) {
			ok = true
			break
		}
		o.LeftLine(t)
	}
	if len(l.items) == 0 {
		st.PauseRequests(false)
	}
	if !ok {
		return zero, false
	}
	return t, true
}

// cancelWait takes the waiter out of the inner service's line, if it is
// there and the inner service lets it.
func (l *Line[Req, Res, T]) cancelWait(st *stagekit.Stage[Req, Res]) {
	if l.w != nil && l.w.waiting && st.Inner().CancelWait(&l.w.Waiter) {
		l.w.waiting = false
	}
}
