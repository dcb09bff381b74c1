package statemachine

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/spawnready"
	"github.com/troupe-go/troupe/stages/timeout"
)

// Stage kinds, simplest first: rapid shrinks towards the first.
var kinds = []string{"limit", "buffer", "timeout", "loadshed", "filter", "asyncfilter", "spawnready", "ratelimit", "retry"}

// policy is retry.Attempts whose methods, user code, panic when the
// request says so.
type policy struct{ retry.Attempts[req, int] }

func (p *policy) Retry(r *req, res *int, err *error) (retry.Wait, bool) {
	if r.PanicPolicy {
		panic(fmt.Sprintf("statemachine: retry policy panics on request %d", r.ID))
	}
	return p.Attempts.Retry(r, res, err)
}

func (p *policy) CloneRequest(r *req) (req, bool) {
	if r.PanicClone {
		panic(fmt.Sprintf("statemachine: CloneRequest panics on request %d", r.ID))
	}
	return p.Attempts.CloneRequest(r)
}

// fixedDelay is a retry backoff of one constant wait.
type fixedDelay time.Duration

func (d fixedDelay) Delay(int) time.Duration { return time.Duration(d) }

// capacity draws a stage capacity: 0 keeps the stage's default.
func capacity(t *rapid.T, label string) int {
	return rapid.SampledFrom([]int{0, 1, 2, 4}).Draw(t, label)
}

// layer draws the parameters of a stage of kind k.
func layer(t *rapid.T, w *world, k string) (troupe.Layer[req, int], string) {
	c := capacity(t, k+".capacity")
	opt := func(f func(int)) {
		if c > 0 {
			f(c)
		}
	}
	switch k {
	case "limit":
		n := rapid.IntRange(1, 3).Draw(t, "limit.n")
		return limit.Layer[req, int](n), fmt.Sprintf("limit(%d)", n)
	case "buffer":
		n := rapid.IntRange(1, 3).Draw(t, "buffer.n")
		return buffer.Layer[req, int](n), fmt.Sprintf("buffer(%d)", n)
	case "timeout":
		d := rapid.SampledFrom([]time.Duration{20 * time.Millisecond, 60 * time.Millisecond, 150 * time.Millisecond}).Draw(t, "timeout.d")
		var opts []timeout.Option
		opt(func(n int) { opts = append(opts, timeout.Capacity(n)) })
		return timeout.Layer[req, int](d, opts...), fmt.Sprintf("timeout(%v,cap %d)", d, c)
	case "loadshed":
		n := rapid.IntRange(1, 2).Draw(t, "loadshed.n")
		return loadshed.Layer[req, int](loadshed.Capacity(n)), fmt.Sprintf("loadshed(%d)", n)
	case "filter":
		var opts []filter.Option
		opt(func(n int) { opts = append(opts, filter.Capacity(n)) })
		w.nFilters++
		return filter.Layer[req, int](w.predicate, opts...), fmt.Sprintf("filter(cap %d)", c)
	case "asyncfilter":
		var opts []filter.Option
		opt(func(n int) { opts = append(opts, filter.Capacity(n)) })
		w.nFilters++
		return filter.AsyncLayer[req, int](w.check, opts...), fmt.Sprintf("asyncfilter(cap %d)", c)
	case "spawnready":
		n := rapid.IntRange(1, 2).Draw(t, "spawnready.n")
		return spawnready.Layer[req, int](spawnready.Capacity(n)), fmt.Sprintf("spawnready(%d)", n)
	case "ratelimit":
		r := ratelimit.Rate{Num: rapid.IntRange(1, 3).Draw(t, "rate.num"), Per: rapid.SampledFrom([]time.Duration{10 * time.Millisecond, 30 * time.Millisecond}).Draw(t, "rate.per")}
		var opts []ratelimit.Option
		opt(func(n int) { opts = append(opts, ratelimit.Capacity(n)) })
		burst := rapid.IntRange(0, 2).Draw(t, "rate.smooth")
		if burst > 0 {
			opts = append(opts, ratelimit.Smooth(burst))
		}
		return ratelimit.Layer[req, int](r, opts...), fmt.Sprintf("ratelimit(%d/%v,cap %d,smooth burst %d)", r.Num, r.Per, c, burst)
	case "retry":
		max := rapid.IntRange(1, 2).Draw(t, "retry.max")
		d := rapid.SampledFrom([]time.Duration{0, 2 * time.Millisecond, 10 * time.Millisecond}).Draw(t, "retry.delay")
		p := policy{retry.Attempts[req, int]{Max: max}}
		if d > 0 {
			p.Backoff = fixedDelay(d)
		}
		var opts []retry.Option
		opt(func(n int) { opts = append(opts, retry.Capacity(n)) })
		w.maxAttempts *= 1 + max
		return retry.Layer[req, int](p, opts...), fmt.Sprintf("retry(max %d,%v,cap %d)", max, d, c)
	}
	panic("unknown stage kind " + k)
}
