package stagekit

import "github.com/troupe-go/troupe/internal/mailbox"

// Waiter waits in an inner service's line for a unit: the stage outside
// puts it there (Inner.ReserveAsync) and takes it out (Inner.CancelWait);
// the inner service tells it the outcome once (Notify): nil when a unit was
// reserved for it, the error that ended the wait otherwise. A Waiter is in
// at most one line at a time.
//
// Safe for concurrent use: its function runs once per wait, on the
// goroutine that decided it.
type Waiter mailbox.Waiter

// NewWaiter returns a Waiter whose outcomes are passed to fn. fn runs on
// whichever goroutine decides the wait (frees the unit, closes the
// service); it must not block: post a control message instead.
func NewWaiter(fn func(error)) *Waiter { return (*Waiter)(mailbox.NewWaiter(fn)) }

// Notify delivers an outcome to w: for inner services that keep a line of
// waiters of their own.
func (w *Waiter) Notify(err error) { w.mb().Notify(err) }

// mb is w as its mailbox knows it.
func (w *Waiter) mb() *mailbox.Waiter { return (*mailbox.Waiter)(w) }
