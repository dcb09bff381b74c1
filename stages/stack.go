package stages

import (
	"context"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/stages/fallback"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/spawnready"
	"github.com/troupe-go/troupe/stages/timeout"
)

// Builder stacks troupe's stages for one request type and one response
// type, named once, in Stack. The first stage added is the outermost: it
// sees a request first and its outcome last. Each method returns a new
// Builder, so a partial builder can be shared and extended; a Builder is
// safe for concurrent use. Nothing is spawned before Build, and a bad
// configuration is Build's error, matching troupe.ErrBadConfig.
type Builder[Req, Res any] struct {
	tb troupe.Builder[Req, Res] // the layers, and the observer given to Observe
}

// Stack returns an empty builder for requests of type Req and responses of
// type Res.
func Stack[Req, Res any]() Builder[Req, Res] { return Builder[Req, Res]{} }

// Layer adds l, any layer of these types (troupehttp's retry policy, a
// stage of your own), inside the layers added before it.
func (b Builder[Req, Res]) Layer(l troupe.Layer[Req, Res]) Builder[Req, Res] {
	b.tb = b.tb.Layer(l)
	return b
}

// Named names the stage added last: in errors, logs and the built stack's
// Stats. Stages are otherwise named by their kind ("limit", "timeout", ...),
// numbered by position where a kind repeats ("timeout-2"). An empty name,
// or a name another stage of the stack has, is Build's error.
func (b Builder[Req, Res]) Named(name string) Builder[Req, Res] {
	b.tb = b.tb.Named(name)
	return b
}

// Limit adds a concurrency limit: at most n requests in flight below it
// (package limit), with its options (limit.MaxWait).
func (b Builder[Req, Res]) Limit(n int, opts ...limit.Option) Builder[Req, Res] {
	return b.Layer(limit.Layer[Req, Res](n, opts...))
}

// Adaptive adds an adaptive concurrency limit: at most as many requests in
// flight below it as its current limit, which follows the latency and the
// errors it measures, between a min and a max (package adaptive).
func (b Builder[Req, Res]) Adaptive(opts ...adaptive.Option) Builder[Req, Res] {
	return b.Layer(adaptive.Layer[Req, Res](opts...))
}

// Timeout adds a timeout of d, from the call to its outcome (package
// timeout).
func (b Builder[Req, Res]) Timeout(d time.Duration, opts ...timeout.Option) Builder[Req, Res] {
	return b.Layer(timeout.Layer[Req, Res](d, opts...))
}

// Retry adds a retry stage that retries every error up to max times after
// the first attempt, waiting as backoff says (nil: at once); a session
// whose retries are spent returns an error matching retry.ErrExhausted. For
// another policy, add retry.Layer with it (package retry).
func (b Builder[Req, Res]) Retry(max int, backoff retry.Delayer, opts ...retry.Option) Builder[Req, Res] {
	return b.Layer(retry.Layer[Req, Res](retry.Attempts[Req, Res]{Max: max, Backoff: backoff}, opts...))
}

// RateLimit adds a rate limit of r (package ratelimit).
func (b Builder[Req, Res]) RateLimit(r ratelimit.Rate, opts ...ratelimit.Option) Builder[Req, Res] {
	return b.Layer(ratelimit.Layer[Req, Res](r, opts...))
}

// Buffer adds a buffer of n slots (package buffer).
func (b Builder[Req, Res]) Buffer(n int) Builder[Req, Res] {
	return b.Layer(buffer.Layer[Req, Res](n))
}

// Fallback adds a fallback: a call that fails inside it is answered by fn
// instead, a value computed from the request and the error, or the outcome
// of an alternative service (fallback.To) (package fallback).
func (b Builder[Req, Res]) Fallback(fn fallback.Func[Req, Res], opts ...fallback.Option[Res]) Builder[Req, Res] {
	return b.Layer(fallback.Layer(fn, opts...))
}

// Breaker adds a circuit breaker: while the calls inside it fail, or are
// slow, too often, it refuses calls at once with an error matching
// breaker.ErrOpen, then lets a few trial calls through to decide whether
// to close again (package breaker).
func (b Builder[Req, Res]) Breaker(opts ...breaker.Option[Res]) Builder[Req, Res] {
	return b.Layer(breaker.Layer[Req, Res](opts...))
}

// Hedge adds a hedging stage: a request still unanswered after a delay
// (fixed, or a latency percentile) is sent once more through the inner
// service's readiness path, the first success wins and the other attempts
// are cancelled; a budget bounds the hedges (package hedge).
func (b Builder[Req, Res]) Hedge(opts ...hedge.Option[Req, Res]) Builder[Req, Res] {
	return b.Layer(hedge.Layer[Req, Res](opts...))
}

// LoadShed adds a load shedder: a request the inner service cannot take at
// once fails with loadshed.ErrOverloaded (package loadshed).
func (b Builder[Req, Res]) LoadShed(opts ...loadshed.Option) Builder[Req, Res] {
	return b.Layer(loadshed.Layer[Req, Res](opts...))
}

// SpawnReady adds a stage that waits for the inner service's readiness in
// the background (package spawnready).
func (b Builder[Req, Res]) SpawnReady(opts ...spawnready.Option) Builder[Req, Res] {
	return b.Layer(spawnready.Layer[Req, Res](opts...))
}

// Filter adds a filter: predicate checks (and may change) each request; an
// error rejects it (package filter).
func (b Builder[Req, Res]) Filter(predicate func(Req) (Req, error), opts ...filter.Option) Builder[Req, Res] {
	return b.Layer(filter.Layer[Req, Res](predicate, opts...))
}

// AsyncFilter adds a filter whose check may block: it runs on a goroutine
// of its own (package filter).
func (b Builder[Req, Res]) AsyncFilter(check func(context.Context, Req) (Req, error), opts ...filter.Option) Builder[Req, Res] {
	return b.Layer(filter.AsyncLayer[Req, Res](check, opts...))
}

// Build spawns the stages in h (an actors.System, a host of one, a
// supervisor.Pipeline; actors.Default() for the process-wide system) over
// inner, innermost first, and returns the stack (see troupe.Builder.Build).
// A nil h is an error matching troupe.ErrBadConfig.
func (b Builder[Req, Res]) Build(h troupe.Host, inner troupe.Service[Req, Res]) (*troupe.Stack[Req, Res], error) {
	return b.tb.Build(h, inner)
}
