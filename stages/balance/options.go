package balance

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/internal/opt"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/loadshed"
)

// The defaults of New.
const (
	// DefaultDecay is the peak-EWMA decay time: how long an estimate takes
	// to fall to 1/e of itself with no round trip seen (tower's default).
	DefaultDecay = 10 * time.Second
	// DefaultRTT is a fresh endpoint's round-trip estimate under
	// peak-EWMA (linkerd's default for tower's PeakEwma).
	DefaultRTT = 30 * time.Millisecond
	// DefaultCooldown is how long an endpoint whose last call failed loses
	// every pair to one whose last call did not.
	DefaultCooldown = time.Second
)

// Option configures New for a balancer of responses of type Res. Every
// option but Classify is a Setting, good for a balancer of any types;
// Classify takes a function of the response, so the compiler checks that
// it is the balancer's.
//
// Options are plain values, safe for concurrent use.
type Option[Res any] func(*config)

// Setting is an Option for a balancer of any types: every option but
// Classify is one.
type Setting = func(*config)

type config struct {
	ewma       bool          // peak-EWMA cost; false: pending requests
	decay, rtt time.Duration // peak-EWMA's decay time and starting estimate
	cooldown   time.Duration
	refused    func(error) bool
	classify   any  // func(Res, error) bool, checked by New; nil: an error is a failure
	classified bool // Classify was given
	delays     backoff.Exponential
	src        rand.Source
	obs        troupe.Observer // Observe's; nil: none
	pipeline   string
	log        *slog.Logger // nil: slog.Default()
	err        error        // the first bad option's
}

func defaults() config {
	d, _ := backoff.New(10*time.Millisecond, time.Second, backoff.WithJitter(backoff.Ratio(0.2)))
	return config{ewma: true, decay: DefaultDecay, rtt: DefaultRTT, cooldown: DefaultCooldown, refused: refusedByDefault, delays: d}
}

// PeakEWMA makes an endpoint's cost its peak-EWMA round trip times one more
// than its calls in flight (tower's PeakEwma): a round trip slower than
// the estimate raises it at once, faster ones pull it down over the decay
// time, and with no round trip seen it decays towards zero. A fresh
// endpoint starts at rtt. Both must be positive. It is the default, with
// DefaultDecay and DefaultRTT.
func PeakEWMA(decay, rtt time.Duration) Setting {
	return func(c *config) {
		if decay <= 0 || rtt <= 0 {
			c.fail(opt.Bad("balance", "PeakEWMA", fmt.Sprintf("(%v, %v)", decay, rtt), "need a positive decay and rtt"))
		}
		c.ewma, c.decay, c.rtt = true, decay, rtt
	}
}

// PendingRequests makes an endpoint's cost its calls in flight (tower's
// PendingRequests): picked and not yet answered.
func PendingRequests() Setting { return func(c *config) { c.ewma = false } }

// FailureCooldown sets how long an endpoint whose last call failed loses
// every pair to an endpoint whose last call did not, whatever their costs
// (default DefaultCooldown; 0 turns it off; it must not be negative). A
// success ends it early. It is what sends a Retry outside the balancer to
// another endpoint: with two or more endpoints ready, the one that just
// failed is picked again only when its partner in the pair failed too.
func FailureCooldown(d time.Duration) Setting {
	return func(c *config) {
		if d < 0 {
			c.fail(opt.Bad("balance", "FailureCooldown", d, "must not be negative"))
		}
		c.cooldown = d
	}
}

// Refused sets which call errors say that the endpoint refused the call
// without trying it, being not ready in a way its Reserve cannot show: the
// endpoint is then not picked for a while (until the time the error's
// RetryAfter(now) method gives, when it has one and it is positive, as a
// *breaker.OpenError does; otherwise the retry backoff's next delay). By
// default an error matching breaker.ErrOpen or loadshed.ErrOverloaded is
// a refusal. A nil fn is New's error.
func Refused(fn func(error) bool) Setting {
	return func(c *config) {
		if fn == nil {
			c.fail(opt.Nil("balance", "Refused"))
		}
		c.refused = fn
	}
}

// Classify sets which outcomes of a call count as the endpoint's failure:
// those for which isFailure returns true. A failure puts the endpoint in
// its cooldown (see FailureCooldown) and counts in its Errors; the round
// trip counts in its cost either way. By default every error is a failure
// and every response a success, so an HTTP replica answering 503 keeps
// winning pairs; troupehttp.IsFailure (a status of 500 or above, or an
// error) makes it lose them, and a Retry outside the balancer goes
// elsewhere:
//
//	balance.New(src, balance.Classify(troupehttp.IsFailure))
//
// A call whose own caller gave up is not asked about (it counts for
// nothing), and an error Refused accepts pauses the endpoint whatever
// isFailure says of it. isFailure runs on the caller's goroutine once the
// call has its outcome, for many calls at once: it must be quick and safe
// for concurrent use. A panic in it is the call's outcome, an error
// matching troupe.ErrPanic (with the call's own error, if it had one),
// and a failure. A nil isFailure is New's error.
func Classify[Res any](isFailure func(res Res, err error) bool) Option[Res] {
	return func(c *config) {
		if isFailure == nil {
			c.fail(opt.Nil("balance", "Classify"))
			return
		}
		c.classify = isFailure
	}
}

// WithBackoff sets the delays between attempts to reserve on an endpoint
// whose Reserve failed, and the pauses of an endpoint that refuses calls
// (see Refused), both growing with each consecutive failure (default: 10 ms
// to 1 s, doubling, 20 % jitter). Make it with backoff.New.
func WithBackoff(delays backoff.Exponential) Setting {
	return func(c *config) {
		if delays.Min <= 0 || delays.Max < delays.Min {
			c.fail(opt.Bad("balance", "WithBackoff", fmt.Sprintf("%v to %v", delays.Min, delays.Max), "need 0 < Min <= Max (use backoff.New)"))
		}
		c.delays = delays
	}
}

// WithSource makes the picks draw from src, for tests that want the same
// picks every run. By default each balancer has a randomly seeded source.
// A nil src is New's error. The balancer uses it under its lock.
func WithSource(src rand.Source) Setting {
	return func(c *config) {
		if src == nil {
			c.fail(opt.Nil("balance", "WithSource"))
		}
		c.src = src
	}
}

func (c *config) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// refusedByDefault reports the refusals of troupe's own stages: an open
// breaker's and a load shedder's.
func refusedByDefault(err error) bool {
	return errors.Is(err, breaker.ErrOpen) || errors.Is(err, loadshed.ErrOverloaded)
}
