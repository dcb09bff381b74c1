// Package backoff computes the waits between retries: exponential growth
// from a minimum, capped at a maximum, with jitter (SPEC RT10).
//
// Two jitter modes are offered: full jitter (a uniform draw between zero and
// the exponential delay, as AWS recommends) and ratio jitter (the delay
// times a uniform factor in [1-r, 1+r], as gRPC's connection backoff does
// with r = 0.2 and multiplier 1.6). Given a seeded source the sequence is
// deterministic. Wait sleeps for a delay unless its context ends first.
//
// An Exponential is a value; its only shared part is the random source,
// which it locks, so it is safe for concurrent use.
package backoff

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// ErrBadConfig is matched by the error of an Exponential with a bad field.
var ErrBadConfig = errors.New("backoff: bad configuration")

// Jitter says how a delay is randomised.
type Jitter struct {
	full  bool
	ratio float64
}

// None keeps delays exact.
var None = Jitter{}

// Full draws each delay uniformly from [0, delay].
var Full = Jitter{full: true}

// Ratio multiplies each delay by a uniform factor in [1-r, 1+r]; r must be
// in [0, 1]. gRPC uses Ratio(0.2).
func Ratio(r float64) Jitter { return Jitter{ratio: r} }

// Exponential is a backoff whose n-th delay (n from 0) is
// min(Max, Min * Multiplier^n), jittered.
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

func (l *lockedRand) float64() float64 {
	if l == nil {
		return rand.Float64()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

// Option configures New.
type Option func(*Exponential)

// WithMultiplier sets the growth factor (default 2); it must be at least 1.
func WithMultiplier(m float64) Option { return func(e *Exponential) { e.Multiplier = m } }

// WithJitter sets the jitter (default None).
func WithJitter(j Jitter) Option { return func(e *Exponential) { e.Jitter = j } }

// WithSource makes the jitter draw from src, for deterministic sequences.
// The source is shared by every copy of the Exponential, under a lock.
func WithSource(src rand.Source) Option {
	return func(e *Exponential) { e.rnd = &lockedRand{r: rand.New(src)} }
}

// New returns an exponential backoff from min to max. It checks the
// configuration: 0 < min <= max, multiplier >= 1, ratio in [0, 1].
func New(min, max time.Duration, opts ...Option) (Exponential, error) {
	e := Exponential{Min: min, Max: max, Multiplier: 2}
	for _, o := range opts {
		o(&e)
	}
	switch {
	case min <= 0 || max < min:
		return Exponential{}, fmt.Errorf("%w: need 0 < min (%v) <= max (%v)", ErrBadConfig, min, max)
	case e.Multiplier < 1 || math.IsNaN(e.Multiplier) || math.IsInf(e.Multiplier, 0):
		return Exponential{}, fmt.Errorf("%w: multiplier %v must be a finite number >= 1", ErrBadConfig, e.Multiplier)
	case e.Jitter.ratio < 0 || e.Jitter.ratio > 1:
		return Exponential{}, fmt.Errorf("%w: jitter ratio %v must be in [0, 1]", ErrBadConfig, e.Jitter.ratio)
	}
	return e, nil
}

// GRPC returns gRPC's connection backoff: 1 s, multiplier 1.6, jitter 0.2,
// at most 120 s.
func GRPC(opts ...Option) Exponential {
	e, _ := New(time.Second, 120*time.Second, append([]Option{WithMultiplier(1.6), WithJitter(Ratio(0.2))}, opts...)...)
	return e
}

// Base returns the n-th delay before jitter: min(Max, Min * Multiplier^n).
// It is a pure function of n.
func (e Exponential) Base(n int) time.Duration {
	if n < 0 {
		n = 0
	}
	d := float64(e.Min) * math.Pow(e.Multiplier, float64(n))
	if d >= float64(e.Max) || math.IsInf(d, 0) || math.IsNaN(d) {
		return e.Max
	}
	return time.Duration(d)
}

// Delay returns the n-th delay, jittered.
func (e Exponential) Delay(n int) time.Duration { return e.jitter(e.Base(n), e.rnd.float64()) }

// jitter applies e's jitter to base with the uniform draw u in [0, 1): a
// pure function, for tests.
func (e Exponential) jitter(base time.Duration, u float64) time.Duration {
	switch {
	case e.Jitter.full:
		return time.Duration(float64(base) * u)
	case e.Jitter.ratio > 0:
		return time.Duration(float64(base) * (1 - e.Jitter.ratio + 2*e.Jitter.ratio*u))
	}
	return base
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
