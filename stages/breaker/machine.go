package breaker

import (
	"math/rand/v2"
	"time"

	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/sat"
)

// machine is the breaker's state machine, as pure functions of the time
// they are given: it decides whether a call may go (admit), counts the
// outcomes it is told of (record, forget), and ends the open delay
// (advance). It is not safe for concurrent use: the behavior guards it with
// its lock, and makes sure it hears only of outcomes of calls it admitted
// in its current state (epoch).
//
// Its methods take the time now, or the zero time from a caller that did
// not read the clock (a count window without slow calls needs no time per
// outcome): the machine reads its clock then, if a change needs the time.
type machine struct {
	o     *options // read-only
	clock stagekit.Clock
	win   window // Closed: the outcomes judged

	state   State
	since   time.Time
	cleared time.Time // Closed with ClearEvery: when the counts were last cleared
	epoch   uint64    // bumped at every change: the calls admitted before no longer count

	// The outcomes in a row in this state, failures or successes (one of
	// them is 0); a change of state starts them over.
	failRun, okRun int

	// HalfOpen: trial calls admitted (under way or decided) and the
	// outcomes of those decided.
	admitted int
	trial    tally

	// Open: when the delay ends, the consecutive openings, the current
	// delay, and the error refused calls get.
	retryAt  time.Time
	openings int
	delay    time.Duration
	openErr  *OpenError
	halfErr  *OpenError // the error of calls refused in HalfOpen; never changed

	refused uint64
	changes []Transition // made and not yet taken by the behavior
}

func newMachine(o *options, clock stagekit.Clock) *machine {
	now := clock.Now()
	m := &machine{o: o, clock: clock, since: now, cleared: now, halfErr: &OpenError{State: HalfOpen}}
	if o.count > 0 {
		m.win = newCountWindow(o.count)
	} else {
		m.win = newTimeWindow(now, o.span, o.buckets)
	}
	return m
}

// advance ends the open delay if it has passed by now: the breaker is
// HalfOpen from the delay's end exactly, whoever notices.
func (m *machine) advance(now time.Time) {
	if m.state == Open && !m.at(now).Before(m.retryAt) {
		m.admitted, m.trial = 0, tally{}
		m.to(HalfOpen, m.retryAt)
	}
}

// clear clears a closed breaker's counts when an interval of ClearEvery
// has ended by now, at the last multiple of the interval.
func (m *machine) clear(now time.Time) {
	if m.o.interval <= 0 || m.state != Closed {
		return
	}
	now = m.at(now)
	if gone := now.Sub(m.cleared); gone >= m.o.interval {
		m.cleared = m.cleared.Add(gone - gone%m.o.interval)
		m.win.reset(now)
		m.failRun, m.okRun = 0, 0
	}
}

// admit decides whether a call made now may go: nil, or the *OpenError
// it is refused with. In HalfOpen an admitted call is a trial.
func (m *machine) admit(now time.Time) *OpenError {
	m.advance(now)
	switch m.state {
	case Open:
		m.refused++
		return m.openErr
	case HalfOpen:
		if m.admitted == m.o.trials {
			m.refused++
			return m.halfErr
		}
		m.admitted++
	}
	return nil
}

// forget is told of an admitted call whose outcome does not count (its
// caller gave up, its classifier panicked): a trial's place goes to the
// next call.
func (m *machine) forget() {
	if m.state == HalfOpen {
		m.admitted--
	}
}

// record counts the outcome of an admitted call, received now, and
// changes state when it decides: in Closed, once the window holds the
// minimum number of calls and a rate reaches its threshold; in HalfOpen,
// once every trial call has its outcome.
func (m *machine) record(failed, slow bool, now time.Time) (tripErr error) {
	m.clear(now) // an interval that ended before this outcome
	if failed {
		m.failRun, m.okRun = m.failRun+1, 0
	} else {
		m.failRun, m.okRun = 0, m.okRun+1
	}
	switch m.state {
	case Closed:
		m.win.add(now, failed, slow)
		t := m.win.totals(now)
		switch {
		case m.o.consecutive > 0 && m.failRun >= m.o.consecutive:
			m.open(now)
		case t.calls >= m.o.minCalls && m.trips(t):
			m.open(now)
		case failed && m.o.tripWhen != nil:
			trip, err := stagekit.Guard1("breaker: TripWhen", func() (bool, error) { return m.o.tripWhen(m.counts(t)), nil })
			if err != nil {
				return err
			}
			if trip {
				m.open(now)
			}
		}
	case HalfOpen:
		m.trial.add(failed, slow, 1)
		if failed && m.o.trialFails {
			m.open(now)
			return
		}
		if m.trial.calls < m.o.trials {
			return
		}
		if m.trips(m.trial) {
			m.open(now)
			return
		}
		now = m.at(now)
		m.openings = 0
		m.win.reset(now)
		m.to(Closed, now)
	}
	return nil
}

// trips reports whether t's failure rate or slow-call rate reaches its
// threshold. t.calls > 0. The rates are quotients, not products, so that
// 3 failures in 10 calls meet a threshold of 0.3 exactly.
func (m *machine) trips(t tally) bool {
	if float64(t.failures)/float64(t.calls) >= m.o.failureRate {
		return true
	}
	return m.o.slowAfter > 0 && float64(t.slow)/float64(t.calls) >= m.o.slowRate
}

// open opens the breaker now, for the next delay of its consecutive
// openings.
func (m *machine) open(now time.Time) {
	now = m.at(now)
	m.delay = nextDelay(m.openings, m.delay, m.o)
	m.openings++
	m.retryAt = now.Add(jittered(m.delay, m.o.jitter))
	m.openErr = &OpenError{State: Open, RetryAt: m.retryAt}
	m.to(Open, now)
}

// nextDelay is the open delay after n consecutive openings, the last of
// which waited prev: OpenDelay, then factor times the last, up to the
// maximum.
func nextDelay(n int, prev time.Duration, o *options) time.Duration {
	if n == 0 {
		return o.delay
	}
	return min(sat.Scale(prev, o.factor), o.maxDelay)
}

// force moves the machine to state to now, an operator's decision: Open
// for the next open delay (its alarm ends it as any opening's), HalfOpen
// with a fresh set of trials, Closed with its window cleared and its
// consecutive openings forgotten (a reset, also when it is Closed already).
// A move to the state it is in changes nothing else.
func (m *machine) force(to State, now time.Time) {
	now = m.at(now)
	m.advance(now)
	switch to {
	case Open:
		if m.state != Open {
			m.open(now)
		}
	case HalfOpen:
		if m.state != HalfOpen {
			m.admitted, m.trial = 0, tally{}
			m.to(HalfOpen, now)
		}
	case Closed:
		m.openings = 0
		m.win.reset(now)
		if m.state != Closed {
			m.to(Closed, now)
		}
	}
}

// counts are t with the machine's runs.
func (m *machine) counts(t tally) Counts {
	return Counts{Calls: t.calls, Failures: t.failures, Slow: t.slow, ConsecutiveFailures: m.failRun, ConsecutiveSuccesses: m.okRun}
}

// jittered is d spread at random over ratio of it either way.
func jittered(d time.Duration, ratio float64) time.Duration {
	if ratio == 0 {
		return d
	}
	return time.Duration(float64(d) * (1 + ratio*(2*rand.Float64()-1)))
}

// at returns now, or the clock's time if now is zero.
func (m *machine) at(now time.Time) time.Time {
	if now.IsZero() {
		return m.clock.Now()
	}
	return now
}

func (m *machine) to(s State, at time.Time) {
	var left tally // the counts of the state left: none in Open
	switch m.state {
	case Closed:
		left = m.win.totals(at)
	case HalfOpen:
		left = m.trial
	}
	m.changes = append(m.changes, Transition{From: m.state, To: s, At: at, Counts: m.counts(left)})
	m.state, m.since, m.cleared = s, at, at
	m.epoch++
	m.failRun, m.okRun = 0, 0
}

// snapshot returns the machine's state now, but for InFlight, which is the
// behavior's.
func (m *machine) snapshot(now time.Time) Snapshot {
	m.advance(now)
	m.clear(now)
	s := Snapshot{State: m.state, Since: m.since, Openings: m.openings, Refused: m.refused,
		ConsecutiveFailures: m.failRun, ConsecutiveSuccesses: m.okRun}
	switch m.state {
	case Closed:
		t := m.win.totals(now)
		s.Calls, s.Failures, s.Slow = t.calls, t.failures, t.slow
	case Open:
		s.RetryAt = m.retryAt
	case HalfOpen:
		s.Calls, s.Failures, s.Slow = m.trial.calls, m.trial.failures, m.trial.slow
	}
	if s.Calls > 0 {
		s.FailureRate = float64(s.Failures) / float64(s.Calls)
		s.SlowRate = float64(s.Slow) / float64(s.Calls)
	}
	return s
}
