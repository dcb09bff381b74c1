package stagekit

import "context"

// WaitGate is implemented by behaviors that refuse at once a caller who
// would wait in the stage's line longer than it may (a rate limit whose
// turn for the caller comes after the caller's deadline, or after its
// maximum wait). RefuseWait is asked when a caller whose context is ctx
// finds no slot and would join the line behind ahead others (the requests
// queued in the stage's mailbox and the callers already in its line): by
// a Reserve, a call through the stage (ReserveAndCall), and the stage
// outside as it parks a request for this one. A non-nil error is that
// caller's outcome at once; the stage outside answers its request with it
// and carries on.
//
// RefuseWait runs on callers' goroutines and on the actor of the stage
// outside, several at once: it must be safe for concurrent use.
type WaitGate interface {
	RefuseWait(ctx context.Context, ahead int) error
}

// refuseWait asks the behavior's WaitGate, if it has one, about a caller
// with ctx about to wait in the stage's line.
func (s *Stage[Req, Res]) refuseWait(ctx context.Context) error {
	if s.hooks == nil || s.hooks.gate == nil {
		return nil
	}
	return s.hooks.gate.RefuseWait(ctx, s.mb.UserMessageCount()+s.mb.WaitingCount())
}
