package redisquota

import (
	"sync"
	"time"
)

// redisClock maps this process's monotonic clock onto Redis's (TIME, in
// microseconds), from round trips whose replies carry Redis's time: the
// script read it between the request's sending and the reply's arrival,
// so Redis's time at the midpoint is known to within half the round trip.
// The estimate kept is the one with the least uncertainty, aged by a
// drift allowance, so a slow round trip never replaces a fast one's.
//
// It lets a client send its deadline on Redis's clock, for a script to
// refuse work that arrives after the client gave up on it. Safe for
// concurrent use.
type redisClock struct {
	base time.Time // never changed

	mu     sync.Mutex
	known  bool  // guarded by mu
	offset int64 // µs: Redis's time minus local µs since base; guarded by mu
	unc    int64 // µs: the offset's uncertainty when measured; guarded by mu
	at     int64 // local µs since base when measured; guarded by mu
}

// driftDiv bounds how fast two clocks drift apart: one part in driftDiv
// (100 ppm, well above what NTP-disciplined clocks do).
const driftDiv = 10_000

func newRedisClock() *redisClock { return &redisClock{base: time.Now()} }

func (c *redisClock) local(t time.Time) int64 { return t.Sub(c.base).Microseconds() }

// observe records that Redis's clock read redisUs during a round trip sent
// at sent whose reply came at got.
func (c *redisClock) observe(sent, got time.Time, redisUs int64) {
	s, g := c.local(sent), c.local(got)
	half := (g - s + 1) / 2
	off := redisUs - (s + half)
	c.mu.Lock()
	if !c.known || half <= c.unc+(g-c.at)/driftDiv {
		c.known, c.offset, c.unc, c.at = true, off, half, g
	}
	c.mu.Unlock()
}

// estimate returns Redis's time at local time t, as best known, and false when
// no round trip has told the offset yet.
func (c *redisClock) estimate(t time.Time) (int64, bool) {
	l := c.local(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	return l + c.offset, c.known
}

// earliest returns the earliest Redis time that local time t may be, and
// false when no round trip has told the offset yet.
func (c *redisClock) earliest(t time.Time) (int64, bool) {
	l := c.local(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.known {
		return 0, false
	}
	age := max(l-c.at, 0)
	return l + c.offset - c.unc - age/driftDiv - 1, true
}
