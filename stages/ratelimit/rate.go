package ratelimit

import (
	"fmt"
	"math"
	"time"

	"github.com/troupe-go/troupe/internal/opt"
)

// Rate is Num requests per period Per, tower's Rate: Rate{Num: 100, Per:
// time.Second} is 100 per second, Rate{Num: 5, Per: 100 * time.Millisecond}
// is 50 per second with smaller bursts. Both must be greater than zero.
// A Rate is a plain value, safe for concurrent use.
type Rate struct {
	Num int
	Per time.Duration
}

// check reports whether r is a rate; the error is a *troupe.ConfigError.
func (r Rate) check() error {
	if r.Num <= 0 || r.Per <= 0 {
		return opt.Bad("ratelimit", "Rate", fmt.Sprintf("%d per %v", r.Num, r.Per), "need a number of requests and a period, both above zero")
	}
	return nil
}

// interval is the smooth mode's spacing between two calls: Per/Num,
// rounded up to the nanosecond so that the rate is never exceeded.
func (r Rate) interval() time.Duration {
	n := time.Duration(r.Num)
	q := r.Per / n
	if r.Per%n != 0 {
		q++
	}
	return q
}

// checkBurst reports whether a smooth mode of r with this burst can be
// computed without overflow: its state spans up to burst intervals.
func (r Rate) checkBurst(burst int) error {
	if burst < 1 || int64(burst) > math.MaxInt64/int64(r.interval()) {
		return opt.Bad("ratelimit", "Smooth", burst, fmt.Sprintf("need a burst of at least 1 whose span at %d per %v fits in a time.Duration", r.Num, r.Per))
	}
	return nil
}
