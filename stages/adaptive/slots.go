package adaptive

import "github.com/troupe-go/troupe/actors/stagekit"

// slots keeps the stage's mailbox honest to its gate. The mailbox has room
// for the max; the stage itself holds the slots above the gate (held), so
// that callers can reserve only as many as the gate allows: readiness is a
// reservation against the current limit, decided by the mailbox's own
// atomic count, first come first served.
//
// When the gate opens, held slots are freed (the first callers in line get
// them). When it closes, the stage owes slots: it takes free ones at once
// when nobody waits, and otherwise keeps, one by one, the slots of the calls
// that end, instead of freeing them, until it owes none (so that callers
// already in line do not get them). Its counts are guarded by the
// behavior's mutex; the mailbox is touched outside it.
type slots struct {
	held int // slots the stage holds in its own mailbox
	owed int // slots it must still take back after a decrease
}

// open accounts for the gate opening by d: it pays what is owed first and
// returns how many held slots to free.
func (s *slots) open(d int) int {
	r := min(d, s.owed)
	s.owed -= r
	d -= r
	s.held -= d
	return d
}

// close accounts for the gate closing by d.
func (s *slots) close(d int) { s.owed += d }

// keep reports whether the slot of a request that leaves the stage is kept
// as one of the stage's own, to pay what is owed; otherwise it is freed.
func (s *slots) keep() bool {
	if s.owed == 0 {
		return false
	}
	s.owed--
	s.held++
	return true
}

// take claims one owed slot for an attempt to take a free one (give it
// back with untake when the attempt fails).
func (s *slots) take() bool { return s.keep() }

// untake undoes a take whose slot could not be reserved.
func (s *slots) untake() {
	s.owed++
	s.held--
}

// holdBack takes n slots of a new stage, before anyone else can reserve,
// and returns how many it got.
func holdBack[Req, Res any](st *stagekit.Stage[Req, Res], n int) int {
	for i := range n {
		if ok, _ := st.TakeSlot(); !ok {
			return i
		}
	}
	return n
}
