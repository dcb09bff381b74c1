// Package backoff computes the waits between retries: exponential growth
// from a minimum, capped at a maximum, with jitter.
//
// Two jitter modes are offered: full jitter (a uniform draw between zero and
// the exponential delay, as AWS recommends) and ratio jitter (the delay
// times a uniform factor in [1-r, 1+r], as gRPC's connection backoff does
// with r = 0.2 and multiplier 1.6). Given a seeded source the sequence is
// deterministic. Wait sleeps for a delay unless its context ends first.
//
// Delays are computed in saturating integer arithmetic: none is negative or
// above Max, and none is below Min except under full jitter, whose purpose
// is to draw from zero. A bad parameter (NaN, infinite, negative, out of
// range) is an error from New, never a surprising delay.
//
// An Exponential is a value; its only shared part is the random source,
// which it locks, so it is safe for concurrent use.
package backoff

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/troupe-go/troupe/internal/opt"
	"github.com/troupe-go/troupe/internal/sat"
)

// Jitter says how a delay is randomised.
//
// A plain value, safe for concurrent use.
type Jitter struct {
	full  bool
	ratio float64
}

// None keeps delays exact.
var None = Jitter{}

// Full draws each delay uniformly from [0, delay].
var Full = Jitter{full: true}

// Ratio multiplies each delay by a uniform factor in [1-r, 1+r], kept
// within [Min, Max]; r must be in [0, 1] (New refuses anything else, NaN
// included). gRPC uses Ratio(0.2).
func Ratio(r float64) Jitter { return Jitter{ratio: r} }

// Exponential is a backoff whose n-th delay (n from 0) is
// min(Max, Min * Multiplier^n), jittered. Build it with New, which checks
// its fields; a value built otherwise still never yields a negative delay
// or one above Max.
//
// Its Delay is safe for concurrent use (the jitter source is locked).
type Exponential struct {
	Min, Max   time.Duration
	Multiplier float64
	Jitter     Jitter
	rnd        *lockedRand
}

type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand // guarded by mu
}

func (l *lockedRand) uint64() uint64 {
	if l == nil {
		return rand.Uint64()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Uint64()
}

// Option configures New.
//
// Options are plain values, safe for concurrent use.
type Option func(*Exponential)

// WithMultiplier sets the growth factor (default 2); it must be a finite
// number of at least 1.
func WithMultiplier(m float64) Option { return func(e *Exponential) { e.Multiplier = m } }

// WithJitter sets the jitter (default None).
func WithJitter(j Jitter) Option { return func(e *Exponential) { e.Jitter = j } }

// WithSource makes the jitter draw from src, for deterministic sequences.
// The source is shared by every copy of the Exponential, under a lock. A
// nil src is New's error.
func WithSource(src rand.Source) Option {
	return func(e *Exponential) {
		e.rnd = &lockedRand{}
		if src != nil {
			e.rnd.r = rand.New(src)
		}
	}
}

// New returns an exponential backoff from min to max. It checks the
// configuration: 0 < min <= max, multiplier a finite number >= 1, jitter
// ratio in [0, 1], no nil option, no nil source; anything else is an error
// that is a *troupe.ConfigError.
func New(min, max time.Duration, opts ...Option) (Exponential, error) {
	e := Exponential{Min: min, Max: max, Multiplier: 2}
	for i, o := range opts {
		if o == nil {
			return Exponential{}, opt.Nil("backoff", fmt.Sprintf("option %d of %d", i+1, len(opts)))
		}
		o(&e)
	}
	switch {
	case min <= 0 || max < min:
		return Exponential{}, opt.Bad("backoff", "min and max", fmt.Sprintf("%v and %v", min, max), "need 0 < min <= max")
	case !(e.Multiplier >= 1) || math.IsInf(e.Multiplier, 0):
		return Exponential{}, opt.Bad("backoff", "WithMultiplier", e.Multiplier, "must be a finite number >= 1")
	case !(e.Jitter.ratio >= 0 && e.Jitter.ratio <= 1):
		return Exponential{}, opt.Bad("backoff", "WithJitter", e.Jitter.ratio, "need a ratio in [0, 1]")
	case e.rnd != nil && e.rnd.r == nil:
		return Exponential{}, opt.Nil("backoff", "WithSource")
	}
	return e, nil
}

// GRPC returns gRPC's connection backoff: 1 s, multiplier 1.6, jitter 0.2,
// at most 120 s, with opts applied after those. A bad option is an error,
// as from New.
func GRPC(opts ...Option) (Exponential, error) {
	return New(time.Second, 120*time.Second, append([]Option{WithMultiplier(1.6), WithJitter(Ratio(0.2))}, opts...)...)
}

// bounds returns [Min, Max] made sound: never negative, never empty.
func (e Exponential) bounds() (lo, hi time.Duration) {
	lo = max(e.Min, 0)
	return lo, max(e.Max, lo)
}

// Base returns the n-th delay before jitter: min(Max, Min * Multiplier^n),
// never below Min. It is a pure function of n.
func (e Exponential) Base(n int) time.Duration {
	lo, hi := e.bounds()
	if n <= 0 || lo == hi {
		return lo
	}
	// The growth factor is a float; the result is clamped in integers, so
	// that rounding can take it neither below Min nor above Max.
	g := math.Pow(e.Multiplier, float64(n))
	if g != g { // NaN: a Multiplier New refuses
		return hi
	}
	return min(max(sat.Scale(lo, g), lo), hi)
}

// Delay returns the n-th delay, jittered.
func (e Exponential) Delay(n int) time.Duration { return e.jitter(e.Base(n), e.rnd.uint64()) }

// jitter applies e's jitter to base with the uniform draw u, read as the
// fraction u / 2^64 in [0, 1): a pure function, for tests. It uses 128-bit
// products, so nothing overflows.
func (e Exponential) jitter(base time.Duration, u uint64) time.Duration {
	lo, hi := e.bounds()
	b := uint64(min(max(base, lo), hi))
	r := e.Jitter.ratio
	switch {
	case e.Jitter.full:
		return time.Duration(scale(b+1, u, 64)) // [0, base]
	case !(r > 0):
		return time.Duration(b)
	}
	q := uint64(min(r, 1) * (1 << 62)) // r in fixed point; exact for r >= 2^-10
	dev := scale(b, q, 62)             // base*r <= base
	from := max(b-dev, uint64(lo))
	to := min(b+dev, uint64(hi)) // b+dev <= 2*base: no overflow in uint64
	if to <= from {
		return time.Duration(from)
	}
	return time.Duration(from + scale(to-from+1, u, 64)) // [from, to]
}

// scale returns x*y / 2^s, rounded down, for results that fit in 64 bits.
func scale(x, y uint64, s uint) uint64 {
	h, l := bits.Mul64(x, y)
	if s == 64 {
		return h
	}
	return h<<(64-s) | l>>s
}

// Wait sleeps for d, or returns ctx's error as soon as ctx ends.
func Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
