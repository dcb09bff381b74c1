package hedge

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
	"github.com/troupe-go/troupe/stages/retry/budget"
)

// Limits of the options.
const (
	// MaxSamples is the most latency samples a stage's window keeps.
	MaxSamples = 10_000
	// MaxHedgesLimit is the highest cap MaxHedges accepts.
	MaxHedgesLimit = 100
)

// Defaults of the options.
const (
	// DefaultWindow is how long a latency sample counts by default.
	DefaultWindow = 10 * time.Second
	// DefaultSamples is how many latency samples the window keeps by default.
	DefaultSamples = 1000
	// DefaultRatio is the default budget's ratio: at most one hedge per ten
	// requests, over a 10 s window.
	DefaultRatio = 0.1
)

// budgetTTL is the window of the budgets made by MaxRatio and by default.
const budgetTTL = 10 * time.Second

// Option configures a Hedge of requests of type Req and responses of type
// Res. Of Delay and Percentile at least one is needed. Most options are
// Settings, good for a hedge of any types; Final and Clone take a function
// of the response or the request, so the compiler checks that it is the
// stage's.
//
// Options are plain values, safe for concurrent use.
type Option[Req, Res any] func(*options)

// Setting is an Option for a hedge of any request and response types:
// every option but Final and Clone is one.
type Setting = func(*options)

type budgetKind int

const (
	budgetRatio  budgetKind = iota // made from ratio (DefaultRatio unless MaxRatio)
	budgetShared                   // WithBudget
	budgetNone                     // NoBudget
)

// options are the options as given; check turns them into a config.
type options struct {
	capacity   int
	fixed      time.Duration
	hasFixed   bool
	pct        float64
	minSamples int
	hasPct     bool
	span       time.Duration
	samples    int
	maxHedges  int
	kind       budgetKind
	ratio      float64
	shared     *budget.Budget
	delayFn    func(int) time.Duration
	hasDelayFn bool
	final      any // func(Res, error) bool, checked by compile
	clone      any // func(Req) Req, checked by compile
	hasFinal   bool
	hasClone   bool
}

// Capacity sets how many requests may be in the stage at once (each one
// holds a slot from its arrival to its outcome, hedges included): the
// stage's mailbox capacity. The default, 0, sets no limit of its own.
func Capacity(n int) Setting { return func(o *options) { o.capacity = n } }

// Delay sets a fixed delay between one attempt's send and the next hedge's.
// With Percentile too, it is the delay used until the window has enough
// samples. 0 sends the first hedge right after the original request.
func Delay(d time.Duration) Setting { return func(o *options) { o.fixed, o.hasFixed = d, true } }

// DelayFunc sets the delay before each hedge as a function of its number:
// the n-th hedge (1 for the first) is sent f(n) after the attempt before
// it, for growing delays (50 ms, then 100 ms, then 200 ms). f is asked
// once per hedge number when the stage is made, for the numbers MaxHedges
// allows, so that no user code runs on a request's path; a negative delay,
// a nil f or a panic in it is New's error. It replaces Delay and
// Percentile: given with either, New fails.
func DelayFunc(f func(n int) time.Duration) Setting {
	return func(o *options) { o.delayFn, o.hasDelayFn = f, true }
}

// Percentile makes the delay the p-th percentile (0 < p <= 100; 95 for
// p95) of the latencies of recent successful attempts, once the window
// holds at least minSamples of them; until then the Delay is used, or, with
// none, requests are not hedged. The percentile is the nearest rank: the
// smallest sample such that at least p % of the samples are at most it.
func Percentile(p float64, minSamples int) Setting {
	return func(o *options) { o.pct, o.minSamples, o.hasPct = p, minSamples, true }
}

// Window sets which latency samples count: those of the last span (a
// sample older than span is forgotten), at most the last n of them
// (1 to MaxSamples). The default is DefaultWindow and DefaultSamples.
func Window(span time.Duration, n int) Setting {
	return func(o *options) { o.span, o.samples = span, n }
}

// MaxHedges caps the hedges sent for one request (1 to MaxHedgesLimit,
// default 1): the k-th is sent a delay after the (k-1)-th attempt.
func MaxHedges(n int) Setting { return func(o *options) { o.maxHedges = n } }

// MaxRatio bounds hedges by a budget of its own: over the last 10 s, at most
// r hedges per request accepted (0 < r <= 1000; rounded down: 10 requests
// at 0.1 afford one hedge). The default budget has DefaultRatio.
// The last of MaxRatio, WithBudget and NoBudget given wins.
func MaxRatio(r float64) Setting { return func(o *options) { o.kind, o.ratio = budgetRatio, r } }

// WithBudget bounds hedges by b, which may be shared by pointer with other
// stages: every request deposits into it, every hedge withdraws. See
// package budget for its rules (its per-second floor allows hedges beyond
// the ratio when traffic is low). A nil b is an error.
func WithBudget(b *budget.Budget) Setting {
	return func(o *options) { o.kind, o.shared = budgetShared, b }
}

// NoBudget lets every request send its hedges, unbounded by any budget.
func NoBudget() Setting { return func(o *options) { o.kind = budgetNone } }

// Final sets which outcomes end a request: the first attempt whose outcome
// final accepts wins, and the others are cancelled. An outcome it refuses
// waits for the other attempts in flight; with none left, it is the
// request's outcome. By default successes (a nil error) are final, and so
// are errors marked with troupe.Permanent: the other attempts are
// cancelled and no further hedge is sent.
// final runs where the outcome was produced, for many requests at once: it
// must not block and must be safe for concurrent use. Its types are the
// stage's, checked by the compiler: name the request type and let the
// response type be inferred, as in hedge.Final[*http.Request](isFinal).
func Final[Req, Res any](final func(res Res, err error) bool) Option[Req, Res] {
	return func(o *options) { o.final, o.hasFinal = final, true }
}

// Clone sets how a hedge's request is made from the request: by default
// the same Req value is sent again, so it must be safe to send twice and to
// share between attempts running at once (a value, or a pointer to data
// nothing changes). clone runs on the stage's actor, while the original
// attempt may run: it must only read its argument and must not block. Its
// types are the stage's, checked by the compiler:
// hedge.Clone[*http.Request, *http.Response](clone).
func Clone[Req, Res any](clone func(req Req) Req) Option[Req, Res] {
	return func(o *options) { o.clone, o.hasClone = clone, true }
}

// config is the checked configuration of one stage; read-only once made.
type config[Req, Res any] struct {
	capacity   int
	fixed      time.Duration
	hasFixed   bool
	pct        float64
	minSamples int
	span       time.Duration
	samples    int
	maxHedges  int
	budget     *budget.Budget // nil: none
	final      func(Res, error) bool
	userFinal  bool            // final is the user's (Final): it runs under stagekit.Guard1
	clone      func(Req) Req   // nil: the same value
	delays     []time.Duration // DelayFunc's: delays[n-1] before the n-th hedge; nil: fixed or percentile
}

// compile checks opts and returns the stage's configuration.
func compile[Req, Res any](opts []Option[Req, Res]) (config[Req, Res], error) {
	o := options{span: DefaultWindow, samples: DefaultSamples, maxHedges: 1, ratio: DefaultRatio}
	if err := opt.Apply("hedge", &o, opts); err != nil {
		return config[Req, Res]{}, err
	}
	c := config[Req, Res]{capacity: o.capacity, fixed: o.fixed, hasFixed: o.hasFixed, span: o.span,
		samples: o.samples, maxHedges: o.maxHedges}
	if _, err := stagekit.CheckCapacity("hedge", o.capacity); err != nil {
		return c, err
	}
	switch {
	case o.hasDelayFn && (o.hasFixed || o.hasPct):
		return c, opt.Bad("hedge", "DelayFunc", nil, "it replaces Delay and Percentile; give one")
	case o.hasDelayFn && o.delayFn == nil:
		return c, opt.Nil("hedge", "DelayFunc")
	case !o.hasFixed && !o.hasPct && !o.hasDelayFn:
		return c, opt.Bad("hedge", "Delay", nil, "need a Delay, a Percentile, or both: the stage would never know when to hedge")
	case o.fixed < 0:
		return c, opt.Bad("hedge", "Delay", o.fixed, "must not be negative")
	case o.hasPct && (!(o.pct > 0 && o.pct <= 100) || o.minSamples < 1):
		return c, opt.Bad("hedge", "Percentile", fmt.Sprintf("(%v, %d)", o.pct, o.minSamples), "need p in (0, 100] and minSamples of at least 1")
	case o.span <= 0 || o.samples < 1 || o.samples > MaxSamples || (o.hasPct && o.samples < o.minSamples):
		return c, opt.Bad("hedge", "Window", fmt.Sprintf("(%v, %d)", o.span, o.samples), fmt.Sprintf("need a positive span and 1 to %d samples, no fewer than the percentile's minimum", MaxSamples))
	case o.maxHedges < 1 || o.maxHedges > MaxHedgesLimit:
		return c, opt.Bad("hedge", "MaxHedges", o.maxHedges, fmt.Sprintf("need 1 to %d", MaxHedgesLimit))
	}
	if o.hasPct {
		c.pct, c.minSamples = o.pct, o.minSamples
	}
	var err error
	if o.hasDelayFn {
		if c.delays, err = delayTable(o.delayFn, o.maxHedges); err != nil {
			return c, err
		}
	}
	if c.budget, err = o.makeBudget(); err != nil {
		return c, err
	}
	if c.final, err = typed[func(Res, error) bool]("Final", o.final, o.hasFinal); err != nil {
		return c, err
	}
	if c.clone, err = typed[func(Req) Req]("Clone", o.clone, o.hasClone); err != nil {
		return c, err
	}
	switch {
	case o.hasFinal && c.final == nil:
		return c, opt.Nil("hedge", "Final")
	case o.hasClone && c.clone == nil:
		return c, opt.Nil("hedge", "Clone")
	case c.final == nil:
		c.final = succeeded[Res]
	}
	c.userFinal = o.hasFinal
	return c, nil
}

// delayTable asks f for the delays of hedges 1 to n, under stagekit.Guard1.
func delayTable(f func(int) time.Duration, n int) ([]time.Duration, error) {
	delays := make([]time.Duration, n)
	for i := range delays {
		d, err := stagekit.Guard1("hedge: DelayFunc", func() (time.Duration, error) { return f(i + 1), nil })
		switch {
		case err != nil:
			return nil, &troupe.ConfigError{Stage: "hedge", Option: "DelayFunc", Value: i + 1, Why: "it failed", Err: err}
		case d < 0:
			return nil, opt.Bad("hedge", "DelayFunc", i+1, fmt.Sprintf("returned %v: a delay must not be negative", d))
		}
		delays[i] = d
	}
	return delays, nil
}

// makeBudget returns the budget the options ask for (nil: none).
func (o *options) makeBudget() (*budget.Budget, error) {
	switch o.kind {
	case budgetNone:
		return nil, nil
	case budgetShared:
		if o.shared == nil {
			return nil, opt.Bad("hedge", "WithBudget", nil, "the budget is nil (use NoBudget for none)")
		}
		return o.shared, nil
	}
	if !(o.ratio > 0) || math.IsInf(o.ratio, 0) {
		return nil, opt.Bad("hedge", "MaxRatio", o.ratio, "must be above 0")
	}
	b, err := budget.New(budgetTTL, 0, o.ratio)
	if err != nil {
		return nil, &troupe.ConfigError{Stage: "hedge", Option: "MaxRatio", Value: o.ratio, Why: "the budget refused it", Err: err}
	}
	return b, nil
}

// typed returns fn as an F, or an error when it is another type.
func typed[F any](name string, fn any, given bool) (F, error) {
	var zero F
	if !given {
		return zero, nil
	}
	f, ok := opt.As[F](fn)
	if !ok {
		return zero, opt.Bad("hedge", name, fmt.Sprintf("%T", fn), fmt.Sprintf("the stage needs a %T", zero))
	}
	return f, nil
}

// succeeded is the default Final: a success ends the request, and so
// does an error no other attempt can cure (troupe.Permanent).
func succeeded[Res any](_ Res, err error) bool {
	return err == nil || errors.Is(err, troupe.ErrPermanent)
}
