package breaker

import (
	"strconv"
	"time"
)

// State is a breaker's state. A plain value, safe for concurrent use.
type State int32

// The states of a breaker.
const (
	// Closed lets every call through and counts the outcomes in its window.
	Closed State = iota
	// Open refuses every call with an *OpenError until its open delay ends.
	Open
	// HalfOpen lets a fixed number of trial calls through and refuses the
	// rest; the trials' outcomes decide whether it closes or opens again.
	HalfOpen
)

// String returns "closed", "open" or "half-open".
func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Snapshot is a breaker's state at one moment: its Stats' Detail and what
// Breaker.Snapshot returns. Its fields are read together, under the
// breaker's lock, so they agree with each other.
//
// A plain value, safe for concurrent use.
type Snapshot struct {
	// State is the breaker's state.
	State State
	// Since is when the breaker entered State. The open delay ends at an
	// exact time, so a breaker found HalfOpen late has Since = the end of
	// its open delay, not the moment it was looked at.
	Since time.Time
	// RetryAt is when the open delay ends, while Open; zero otherwise.
	RetryAt time.Time
	// Calls, Failures and Slow count outcomes: in Closed, those in the
	// window now; in HalfOpen, the trial calls' outcomes so far; in Open,
	// none. A call can be both a failure and slow.
	Calls, Failures, Slow int
	// FailureRate and SlowRate are Failures and Slow over Calls (0 with no
	// calls): the rates the breaker judges.
	FailureRate, SlowRate float64
	// ConsecutiveFailures and ConsecutiveSuccesses count the outcomes in a
	// row in this state (one of them is 0); see ConsecutiveFailures.
	ConsecutiveFailures, ConsecutiveSuccesses int
	// InFlight counts the calls let through in this state whose outcome
	// is not in yet (in HalfOpen, the trial calls under way).
	InFlight int
	// Openings counts the breaker's consecutive openings, which make its
	// open delay grow (see GrowOpenDelay); 0 once it has closed again.
	Openings int
	// Refused counts the calls refused with ErrOpen since the stage began.
	Refused uint64
}

// Transition is one change of a breaker's state, with the counts of the
// state it left as they were at the change (what gobreaker's ReadyToTrip
// saw): in Closed, the window's; in HalfOpen, the trials'; none in Open.
// OnTransition is given one for every change.
//
// A plain value, safe for concurrent use.
type Transition struct {
	From, To State
	// At is when the change happened (the end of the open delay, exactly,
	// for Open to HalfOpen).
	At time.Time
	// The counts of the state left.
	Counts
}

// Counts are the outcomes a breaker counts in one state: in Closed, those
// in its window; in HalfOpen, the trials'. What a trip function
// (TripWhen) and OnTransition are given.
//
// A plain value, safe for concurrent use.
type Counts struct {
	// Calls, Failures and Slow count the outcomes (a call can be both a
	// failure and slow).
	Calls, Failures, Slow int
	// ConsecutiveFailures and ConsecutiveSuccesses are the outcomes in a
	// row (one of them is 0).
	ConsecutiveFailures, ConsecutiveSuccesses int
}
