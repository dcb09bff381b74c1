package adaptive

import (
	"fmt"
	"time"

	"github.com/troupe-go/troupe/internal/opt"
)

// MaxLimit is the largest max New accepts. The stage holds back, in its
// own mailbox, the slots between the current limit and the max, so a
// larger max costs more at construction; a max above MaxLimit is an error
// of New, never a smaller max.
const MaxLimit = 1 << 16

// The defaults. The limits and the backoff are those of Netflix's
// concurrency-limits and of failsafe-go.
const (
	// DefaultMin is the default lowest limit, where probes run.
	DefaultMin = 1
	// DefaultMax is the default highest limit.
	DefaultMax = 200
	// DefaultInitial is the default limit after the first probe.
	DefaultInitial = 20
	// DefaultBackoff is the default ratio a drop multiplies the limit by.
	DefaultBackoff = 0.9
	// DefaultSamples is the default fewest samples of a window.
	DefaultSamples = 10
	// DefaultProbe is how long, by default, the baseline may go
	// unconfirmed before a probe measures it again.
	DefaultProbe = 10 * time.Second
)

// Option configures an adaptive limit.
//
// Options are plain values, safe for concurrent use.
type Option func(*config)

type config struct {
	min, max   int
	initial    int
	hasInitial bool
	backoff    float64
	samples    int
	probeEvery time.Duration
	classify   func(error) bool
	onChange   func(old, new int)

	classifySet, onChangeSet bool
}

// Limits sets the range the limit moves in: never below min, never above
// max. The defaults are DefaultMin and DefaultMax. They must satisfy
// 1 <= min <= max <= MaxLimit.
func Limits(min, max int) Option { return func(c *config) { c.min, c.max = min, max } }

// Initial sets the limit the stage moves to once its first window, a probe
// at the min, has measured the baseline; it must lie between the min and
// the max. The default is DefaultInitial, or the
// nearer of the min and the max when that lies outside them.
func Initial(n int) Option { return func(c *config) { c.initial, c.hasInitial = n, true } }

// Backoff sets the ratio a drop multiplies the limit by (the
// multiplicative decrease of AIMD), strictly between 0 and 1
// The default is DefaultBackoff. A drop always takes at
// least one off the limit, down to the min.
func Backoff(ratio float64) Option { return func(c *config) { c.backoff = ratio } }

// Samples sets the fewest latency samples a window closes with; a window
// also waits for as many samples as the current limit, so that it covers
// at least one round of the calls in flight. At least 1; the
// default is DefaultSamples.
func Samples(n int) Option { return func(c *config) { c.samples = n } }

// ProbeEvery sets how long the baseline (the latency of the service
// inside without a queue) may go without a window confirming it before the
// stage measures it again, with a probe window at the min limit. It must be
// greater than zero; the default is DefaultProbe.
func ProbeEvery(d time.Duration) Option { return func(c *config) { c.probeEvery = d } }

// Classify sets which errors are drops, signs that the service inside is
// overloaded: those for which overloaded returns true cut the limit; the
// others count as completed calls, their latency measured like a
// success's. By default every error is a drop. Either way, a call whose
// caller cancelled it (its context was cancelled) is neither: it tells
// nothing about the service inside, and is not counted.
//
// overloaded runs where the call's outcome was produced (the caller's
// goroutine, a stage's actor), for many calls at once: it must be safe for
// concurrent use and must not block. A panic in it becomes the call's
// outcome, a *troupe.PanicError, and the call is not counted. A nil
// overloaded is New's error.
func Classify(overloaded func(err error) bool) Option {
	return func(c *config) { c.classify, c.classifySet = overloaded, true }
}

// OnLimitChange sets a function told of every change of the limit, in
// order, from old to new. It is never called concurrently with itself; it
// is told of an increase before any call is admitted under it, and of a
// decrease just after it took effect. It runs on the goroutine of a call
// whose outcome changed the limit (or of the next one, when another call
// was telling it meanwhile); it must not block and must not call the
// stage. A panic in it becomes that call's outcome, a *troupe.PanicError;
// the change stands. A nil fn is New's error.
func OnLimitChange(fn func(old, new int)) Option {
	return func(c *config) { c.onChange, c.onChangeSet = fn, true }
}

// configure applies opts over the defaults and checks the result.
func configure(opts []Option) (config, error) {
	c := config{min: DefaultMin, max: DefaultMax, backoff: DefaultBackoff, samples: DefaultSamples, probeEvery: DefaultProbe}
	if err := opt.Apply("adaptive", &c, opts); err != nil {
		return c, err
	}
	switch {
	case c.classifySet && c.classify == nil:
		return c, opt.Nil("adaptive", "Classify's function")
	case c.onChangeSet && c.onChange == nil:
		return c, opt.Nil("adaptive", "OnLimitChange's function")
	}
	if c.min < 1 || c.max < c.min || c.max > MaxLimit {
		return c, opt.Bad("adaptive", "Limits", fmt.Sprintf("(%d, %d)", c.min, c.max), fmt.Sprintf("need 1 <= min <= max <= %d", MaxLimit))
	}
	if !c.hasInitial {
		c.initial = min(max(DefaultInitial, c.min), c.max)
	}
	if c.initial < c.min || c.initial > c.max {
		return c, opt.Bad("adaptive", "Initial", c.initial, fmt.Sprintf("not between the min %d and the max %d", c.min, c.max))
	}
	if !(c.backoff > 0 && c.backoff < 1) { // NaN fails too
		return c, opt.Bad("adaptive", "Backoff", c.backoff, "need a ratio above 0 and below 1")
	}
	if c.samples < 1 {
		return c, opt.Bad("adaptive", "Samples", c.samples, "need at least 1")
	}
	if c.probeEvery <= 0 {
		return c, opt.Bad("adaptive", "ProbeEvery", c.probeEvery, "need a positive interval")
	}
	return c, nil
}
