package ratelimit

import (
	"errors"
	"fmt"
	"time"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// Cost makes each request take cost(req) units of the rate at once
// (x/time/rate's WaitN): a call goes when that many are left, and waits
// for them otherwise, first come first served. cost must be of the stage's
// request type (func(Req) int; any other is an error matching
// troupe.ErrBadConfig at New), cheap, and the same for the same request:
// the stage may ask it more than once. A request whose cost is below 1,
// or above what the stage can ever give at once (the window's Num, or the
// smooth mode's burst), is answered at once with a *CostError, spending
// nothing. With Cost, every request crosses the stage on its actor, and a
// caller's turn (see MaxWait) counts one unit per request ahead of it.
func Cost[Req any](cost func(Req) int) Option {
	return func(c *config) { c.cost, c.costSet = cost, true }
}

// ErrCost is matched by the error of a request whose Cost the stage can
// never give: a *CostError.
var ErrCost = errors.New("ratelimit: a request's cost cannot be given")

// CostError is the answer to a request whose cost, from Cost, is below 1
// or above the most the stage gives at once (x/time/rate's WaitN refuses
// n above the burst). It matches ErrCost.
//
// A plain value, safe for concurrent use.
type CostError struct {
	Cost int // the request's cost
	Max  int // the most the stage gives at once
}

func (e *CostError) Error() string {
	if e.Cost < 1 {
		return fmt.Sprintf("ratelimit: a request's cost is %d; it must be at least 1", e.Cost)
	}
	return fmt.Sprintf("ratelimit: a request's cost of %d exceeds the %d the stage gives at once", e.Cost, e.Max)
}

// Is reports whether target is ErrCost.
func (e *CostError) Is(target error) bool { return target == ErrCost }

// options are a stage's optional rules (see behavior.opts).
type options[Req any] struct {
	maxWait time.Duration
	cost    func(Req) int // nil: one unit a request
}

func (b *behavior[Req, Res]) maxWait() time.Duration {
	if b.opts == nil {
		return 0
	}
	return b.opts.maxWait
}

// costOf is e's cost (actor; checked when e came in).
func (b *behavior[Req, Res]) costOf(e *stagekit.Envelope[Req, Res]) int {
	if b.opts == nil || b.opts.cost == nil {
		return 1
	}
	return b.opts.cost(e.Req)
}

// affords reports whether the stage can ever give n units at once.
func (b *behavior[Req, Res]) affords(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return n >= 1 && n <= b.lim.maxCost()
}

func (b *behavior[Req, Res]) costError(n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return &CostError{Cost: n, Max: b.lim.maxCost()}
}
