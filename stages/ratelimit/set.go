package ratelimit

import (
	"fmt"
	"math"
	"time"

	"github.com/troupe-go/troupe/internal/opt"
)

// SetRate changes the stage's rate to r while the stack runs, as
// x/time/rate's SetLimit: what the old rate gave up to now is kept, and
// from now on units come at the new rate. In smooth mode the units owed
// (the bucket's deficit) are re-counted at the new interval, so a faster
// rate brings the next unit closer; in the fixed window the calls already
// made in the current window count against the new Num, and the window
// ends Per after it began. A caller already waiting for its turn gets it
// by the new rate. A bad rate is an error matching troupe.ErrBadConfig
// and changes nothing, as is any rate with a Remote limiter (its rate is
// the limiter's). Safe for concurrent use.
func (l *RateLimit[Req, Res]) SetRate(r Rate) error {
	if l.rb != nil {
		return opt.Bad("ratelimit", "SetRate", fmt.Sprintf("%d per %v", r.Num, r.Per), "a Remote limiter sets its own rate")
	}
	if err := r.check(); err != nil {
		return err
	}
	return l.b.retune(func(lim limiter, now time.Time) error { return lim.setRate(now, r) })
}

// SetBurst changes the smooth mode's burst to n while the stack runs, as
// x/time/rate's SetBurst: the units the bucket holds now are kept (never
// more than n), and from now on it refills up to n. It is an error
// matching troupe.ErrBadConfig, changing nothing, for n below 1, or a
// stage not in smooth mode (the fixed window's burst is its Num: see
// SetRate). Safe for concurrent use.
func (l *RateLimit[Req, Res]) SetBurst(n int) error {
	if l.b == nil {
		return opt.Bad("ratelimit", "SetBurst", n, "a Remote limiter sets its own burst")
	}
	return l.b.retune(func(lim limiter, now time.Time) error {
		g, ok := lim.(*gcra)
		if !ok {
			return opt.Bad("ratelimit", "SetBurst", n, "needs the smooth mode (Smooth)")
		}
		return g.setBurst(now, n)
	})
}

// retune applies set to the limiter at now, under mu, then has the actor
// look at the limiter again (an alarm message), as when a unit comes: the
// kept requests go if they may, and the stage's admission follows.
func (b *behavior[Req, Res]) retune(set func(limiter, time.Time) error) error {
	b.mu.Lock()
	err := set(b.lim, b.clock.Now())
	b.mu.Unlock()
	if err != nil {
		return err
	}
	b.alarm.Post()
	return nil
}

// setRate re-counts the units owed at the new interval: tokens at now are
// kept, and the bucket refills at r from now (x/time/rate's SetLimitAt).
func (g *gcra) setRate(now time.Time, r Rate) error {
	if err := r.checkBurst(g.burst); err != nil {
		return err
	}
	iv := r.interval()
	if g.tat.After(now) {
		owed := float64(g.tat.Sub(now)) * float64(iv) / float64(g.interval)
		g.tat = now.Add(time.Duration(math.Ceil(owed))) // never faster than r
	}
	g.r, g.interval, g.tolerance = r, iv, time.Duration(g.burst-1)*iv
	return nil
}

// setBurst keeps the units the bucket holds at now, at most n, and lets it
// refill to n (x/time/rate's SetBurstAt).
func (g *gcra) setBurst(now time.Time, n int) error {
	if err := g.r.checkBurst(n); err != nil {
		return err
	}
	if g.tat.Before(now) {
		g.tat = now
	}
	// The deficit, burst - tokens, grows by what the burst grows.
	g.tat = g.tat.Add(time.Duration(n-g.burst) * g.interval)
	if g.tat.Before(now) {
		g.tat = now // more units than the new burst: the bucket is full
	}
	g.burst, g.tolerance = n, time.Duration(n-1)*g.interval
	return nil
}

// setRate keeps the current window's start and the calls made in it: they
// count against r.Num, and the window ends r.Per after its start.
func (w *window) setRate(_ time.Time, r Rate) error {
	used := w.n - w.rem
	w.n, w.per, w.rem = r.Num, r.Per, max(r.Num-used, 0)
	return nil
}
