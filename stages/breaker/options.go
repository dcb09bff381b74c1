package breaker

import (
	"fmt"
	"math"
	"time"

	"github.com/troupe-go/troupe/internal/opt"
)

// Option configures a Breaker whose responses are of type Res. Most
// options are Settings, good for a breaker of any response type; Classify
// and Exclude take a function of the response, so the compiler checks that
// it is the stage's. Options are plain values, safe for concurrent use;
// they are checked when the stage is made (New, or Build for a layer),
// never when the option is.
type Option[Res any] func(*options)

// Setting is an Option for a breaker of any response type: every option but
// Classify and Exclude is one.
type Setting = func(*options)

// The defaults are resilience4j's: a window of the last 100 calls, a
// failure rate of 50 %, 100 calls before the rates apply, 10 trial calls,
// an open delay of 60 s.
const (
	DefaultCountWindow = 100
	DefaultFailureRate = 0.5
	DefaultMinCalls    = 100
	DefaultTrials      = 10
	DefaultOpenDelay   = 60 * time.Second
)

// MaxCountWindow is the largest count window, and MaxBuckets the most
// buckets of a time window: each call of a count window, and each bucket,
// takes memory from the start.
const (
	MaxCountWindow = 1 << 20
	MaxBuckets     = 1 << 16
)

// options is a breaker's configuration: filled by the options, checked
// and completed by check, then read-only.
type options struct {
	count       int           // count window size; 0 when timed
	span        time.Duration // time window; 0 when counted
	buckets     int
	timed       bool // TimeWindow was the last window given
	failureRate float64
	slowAfter   time.Duration // 0: slow calls are not counted
	slowRate    float64
	slowSet     bool
	minCalls    int
	minSet      bool
	trials      int
	delay       time.Duration
	factor      float64
	maxDelay    time.Duration
	classify    any // func(Res, error) bool, checked by New
	classifySet bool
	exclude     any // func(Res, error) bool, checked by New
	excludeSet  bool
	onChange    func(from, to State)
	onChangeSet bool
	onTrans     func(Transition)
	onTransSet  bool
	consecutive int // ConsecutiveFailures; 0: none
	consecSet   bool
	trialFails  bool          // ReopenOnTrialFailure
	interval    time.Duration // ClearEvery; 0: never
	intervalSet bool
	jitter      float64 // JitterOpenDelay; 0: none
	tripWhen    func(Counts) bool
	tripSet     bool
}

func defaults() options {
	return options{count: DefaultCountWindow, failureRate: DefaultFailureRate,
		trials: DefaultTrials, delay: DefaultOpenDelay, factor: 1}
}

// CountWindow makes the breaker judge the last n calls (the default, with
// n = 100): the oldest outcome leaves as each new one comes in. n must be
// between 1 and MaxCountWindow.
func CountWindow(n int) Setting {
	return func(o *options) { o.count, o.span, o.buckets, o.timed = n, 0, 0, false }
}

// TimeWindow makes the breaker judge the calls whose outcomes came in over
// the last d, counted in buckets of d/buckets each: an outcome leaves the
// window with its bucket, between d - d/buckets and d after it came in.
// d must be positive and a whole multiple of buckets nanoseconds, and
// buckets between 1 and MaxBuckets.
func TimeWindow(d time.Duration, buckets int) Setting {
	return func(o *options) { o.count, o.span, o.buckets, o.timed = 0, d, buckets, true }
}

// FailureRate sets the share of failed calls in the window, from 0 (not
// included) to 1, at which the breaker opens (default 0.5).
func FailureRate(rate float64) Setting { return func(o *options) { o.failureRate = rate } }

// SlowCalls counts a call that takes longer than d, from the moment it is
// made to its outcome, as slow, and opens the breaker when the share of
// slow calls in the window reaches rate (from 0, not included, to 1),
// whether they failed or not. Without it, slow calls are not counted.
func SlowCalls(d time.Duration, rate float64) Setting {
	return func(o *options) { o.slowAfter, o.slowRate, o.slowSet = d, rate, true }
}

// MinCalls sets how many outcomes the window must hold before the rates
// apply (at least 1). The default is the count window's size (a full
// window), or DefaultMinCalls with a time window. With a count window it
// may not exceed the window's size.
func MinCalls(n int) Setting { return func(o *options) { o.minCalls, o.minSet = n, true } }

// HalfOpenTrials sets how many trial calls the breaker lets through when
// its open delay ends (default 10); it refuses the others meanwhile. Once
// all of them have their outcome, the breaker closes if their rates are
// below the thresholds, or opens again.
func HalfOpenTrials(n int) Setting { return func(o *options) { o.trials = n } }

// OpenDelay sets how long the breaker stays open before it lets trial
// calls through (default 60 s; positive).
func OpenDelay(d time.Duration) Setting { return func(o *options) { o.delay = d } }

// GrowOpenDelay makes the open delay grow when the breaker opens again
// from HalfOpen: each consecutive opening waits factor times as long as
// the one before, up to limit. It starts again from OpenDelay once the
// breaker has closed. factor must be at least 1, limit at least OpenDelay.
func GrowOpenDelay(factor float64, limit time.Duration) Setting {
	return func(o *options) { o.factor, o.maxDelay = factor, limit }
}

// TripWhen makes the breaker also open when trip, given the closed
// window's counts after each failure, returns true (gobreaker's
// ReadyToTrip), beside the window's rates and ConsecutiveFailures. It runs
// under the breaker's lock, where the failure was produced: it must be
// quick, must not block, and must not call the breaker. A panic in it is
// the call's outcome (an error matching troupe.ErrPanic), and the breaker
// stays closed. A nil trip is New's error.
func TripWhen(trip func(c Counts) bool) Setting {
	return func(o *options) { o.tripWhen, o.tripSet = trip, true }
}

// JitterOpenDelay spreads each open delay at random over ratio of it
// either way (0.2: from 0.8 to 1.2 times the delay), so that the breakers
// of many processes that opened together do not all let their trials
// through at one instant. The delay grows (GrowOpenDelay) from the delay
// before the jitter. ratio must be in [0, 1).
func JitterOpenDelay(ratio float64) Setting { return func(o *options) { o.jitter = ratio } }

// Classify sets which outcomes count as failures: those for which
// isFailure returns true. By default every error does. Whatever the
// classifier, a call whose own caller gave up (its context ended, and the
// outcome is that context's error) is not counted at all: the service is
// not to blame. Res is the stage's response type, inferred from
// isFailure: a classifier of another type does not compile.
// isFailure runs wherever the outcome was produced, possibly another
// stage's actor: it must not block, and must be safe for concurrent use. A
// panic in it is the call's outcome (an error matching troupe.ErrPanic),
// and the call is not counted.
func Classify[Res any](isFailure func(res Res, err error) bool) Option[Res] {
	return func(o *options) {
		o.classify, o.classifySet = isFailure, true
		if isFailure == nil {
			o.classify = nil
		}
	}
}

// OnStateChange calls f at every change of state, in order, one at a
// time, on a goroutine the breaker starts for it (never on an actor, never
// holding a lock of the breaker). The call whose outcome made the change
// gets its outcome once f has returned, so keep f short: while it blocks,
// that call waits (and so does Close, to drain it), but the breaker serves
// every other call. A panic in f is that call's outcome (an error matching
// troupe.ErrPanic); for a change no call made (the open delay ending), the
// panic is logged through the system's logger.
func OnStateChange(f func(from, to State)) Setting {
	return func(o *options) { o.onChange, o.onChangeSet = f, true }
}

// OnTransition calls f at every change of state with the counts of the
// state left (a Transition), as OnStateChange calls its function: in
// order, on the breaker's notifying goroutine, after OnStateChange when
// both are set, the call that made the change waiting for it, a panic in
// f that call's outcome. A nil f is New's error.
func OnTransition(f func(Transition)) Setting {
	return func(o *options) { o.onTrans, o.onTransSet = f, true }
}

// ConsecutiveFailures makes the breaker also open after n failures in a
// row while closed, whatever its window's rates (gobreaker's default
// ReadyToTrip is ConsecutiveFailures(6), "more than 5"; failsafe-go's
// WithFailureThreshold(n) is ConsecutiveFailures(n)). A success, or a
// change of state, starts the count over; the outcomes its classifier
// does not count (the caller's own cancellation) leave it as it is. n
// must be at least 1.
func ConsecutiveFailures(n int) Setting {
	return func(o *options) { o.consecutive, o.consecSet = n, true }
}

// ClearEvery clears the breaker's counts every d while it is closed
// (gobreaker's Interval): the window and the runs start over at each
// multiple of d after the breaker closed (or was made). A time window
// (TimeWindow) forgets gradually instead; this forgets at once. d must be
// positive.
func ClearEvery(d time.Duration) Setting {
	return func(o *options) { o.interval, o.intervalSet = d, true }
}

// ReopenOnTrialFailure makes the first failed trial call open the breaker
// again at once, without waiting for the other trials' outcomes
// (gobreaker's half-open, and a success threshold of HalfOpenTrials(k):
// the breaker closes once k trials in a row succeeded). By default the
// trials are judged together, by the window's rates, once all are in.
func ReopenOnTrialFailure() Setting { return func(o *options) { o.trialFails = true } }

// Exclude sets which outcomes count neither way (gobreaker's IsExcluded):
// those for which excluded returns true are left out of the window, the
// trials and the runs, as the caller's own cancellation is (a trial
// excluded gives its place to the next call). It is asked before Classify.
// Res is the stage's response type, inferred from excluded: a function of
// another type does not compile, and a nil one is New's error. It runs
// where the outcome was produced: it must not block, and must be safe for
// concurrent use; a panic in it is the call's outcome (an error matching
// troupe.ErrPanic), and the call is not counted.
func Exclude[Res any](excluded func(res Res, err error) bool) Option[Res] {
	return func(o *options) {
		o.exclude, o.excludeSet = excluded, true
		if excluded == nil {
			o.exclude = nil
		}
	}
}

// check validates o and fills in the defaults that depend on others.
func (o *options) check() error {
	switch {
	case !o.timed && (o.count < 1 || o.count > MaxCountWindow):
		return opt.Bad("breaker", "CountWindow", o.count, fmt.Sprintf("need 1 to %d", MaxCountWindow))
	case o.timed && (o.span <= 0 || o.buckets < 1 || o.buckets > MaxBuckets || o.span%time.Duration(o.buckets) != 0):
		return opt.Bad("breaker", "TimeWindow", fmt.Sprintf("(%v, %d)", o.span, o.buckets), fmt.Sprintf("need a positive window, 1 to %d buckets, and equal buckets", MaxBuckets))
	case o.minSet && (o.minCalls < 1 || o.count > 0 && o.minCalls > o.count):
		return opt.Bad("breaker", "MinCalls", o.minCalls, "need 1 to the window's size")
	case !isRate(o.failureRate):
		return opt.Bad("breaker", "FailureRate", o.failureRate, "need a rate in (0, 1]")
	case o.slowSet && (o.slowAfter <= 0 || !isRate(o.slowRate)):
		return opt.Bad("breaker", "SlowCalls", fmt.Sprintf("(%v, %v)", o.slowAfter, o.slowRate), "need a positive duration and a rate in (0, 1]")
	case o.trials < 1:
		return opt.Bad("breaker", "HalfOpenTrials", o.trials, "need at least 1")
	case o.delay <= 0:
		return opt.Bad("breaker", "OpenDelay", o.delay, "must be positive")
	case o.factor < 1 || math.IsInf(o.factor, 0) || math.IsNaN(o.factor):
		return opt.Bad("breaker", "GrowOpenDelay", o.factor, "the factor must be a finite number of at least 1")
	case !(o.jitter >= 0 && o.jitter < 1):
		return opt.Bad("breaker", "JitterOpenDelay", o.jitter, "need a fraction in [0, 1)")
	case o.factor > 1 && o.maxDelay < o.delay:
		return opt.Bad("breaker", "GrowOpenDelay", o.maxDelay, fmt.Sprintf("the maximum is below the open delay %v", o.delay))
	case o.intervalSet && o.interval <= 0:
		return opt.Bad("breaker", "ClearEvery", o.interval, "need a positive interval")
	case o.consecSet && o.consecutive < 1:
		return opt.Bad("breaker", "ConsecutiveFailures", o.consecutive, "need at least 1")
	case o.classifySet && o.classify == nil:
		return opt.Nil("breaker", "Classify")
	case o.excludeSet && o.exclude == nil:
		return opt.Nil("breaker", "Exclude")
	case o.onChangeSet && o.onChange == nil:
		return opt.Nil("breaker", "OnStateChange")
	case o.onTransSet && o.onTrans == nil:
		return opt.Nil("breaker", "OnTransition")
	case o.tripSet && o.tripWhen == nil:
		return opt.Nil("breaker", "TripWhen")
	}
	if !o.minSet {
		o.minCalls = DefaultMinCalls
		if o.count > 0 {
			o.minCalls = o.count
		}
	}
	if o.factor == 1 {
		o.maxDelay = o.delay
	}
	return nil
}

// isRate reports whether r is in (0, 1] (false for NaN).
func isRate(r float64) bool { return r > 0 && r <= 1 }
