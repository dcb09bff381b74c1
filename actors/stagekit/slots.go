package stagekit

// SetAdmission opens or shuts the stage to new reservations (actor only):
// while it is shut, Reserve waits, TryReserve refuses, and the stage
// outside finds it not ready (a rate limit that binds). The requests
// already reserved are not touched.
func (s *Stage[Req, Res]) SetAdmission(open bool) { s.mb.SetAdmission(open) }

// TakeSlot takes one of the stage's own free slots for the behavior to hold
// (an adaptive limit's slots above its limit) and reports whether it got
// one; the error is the closed stage's. Safe anywhere.
func (s *Stage[Req, Res]) TakeSlot() (bool, error) { return s.mb.TryReserve() }

// TakeSlotWithin is TakeSlot while fewer than n of the stage's slots are in
// use (a load shedder's slots kept for the higher priorities).
func (s *Stage[Req, Res]) TakeSlotWithin(n int) (bool, error) { return s.mb.TryReserveWithin(n) }

// GiveSlot gives back a slot TakeSlot took. Safe anywhere.
func (s *Stage[Req, Res]) GiveSlot() { s.mb.Free() }

// ClosedErr returns the error a closed stage answers with, or nil while it
// is open. Safe anywhere.
func (s *Stage[Req, Res]) ClosedErr() error {
	if !s.mb.Closed() {
		return nil
	}
	return s.mb.CloseErr()
}

// SetCapacity changes the number of slots in the stage's mailbox to n while
// the stage runs (the caller checks n: 1 to MaxCapacity). Raising it wakes
// those waiting for a slot, first in line first; lowering it takes back no
// slot already reserved or held, and reservations wait until fewer than n
// are in use. Safe anywhere.
func (s *Stage[Req, Res]) SetCapacity(n int) { s.mb.SetCapacity(n) }
