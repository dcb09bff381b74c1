package ratelimit_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

const ms = time.Millisecond

var perSecond = func(n int) ratelimit.Rate { return ratelimit.Rate{Num: n, Per: time.Second} }

// recorder is an inner service that notes when each request reaches it,
// as a duration since the recorder was made (inside a synctest bubble,
// exact). It is safe for concurrent use.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	at    []time.Duration // guarded by mu
}

func newRecorder() *recorder { return &recorder{start: time.Now()} }

func (r *recorder) call(_ context.Context, v int) (int, error) {
	r.mu.Lock()
	r.at = append(r.at, time.Since(r.start))
	r.mu.Unlock()
	return v, nil
}

func (r *recorder) service() *actors.FuncService[int, int] { return actors.Func(r.call) }

// times returns the arrival times so far, in order.
func (r *recorder) times() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	ts := slices.Clone(r.at)
	slices.Sort(ts)
	return ts
}

// since is the time since the recorder was made.
func (r *recorder) since() time.Duration { return time.Since(r.start) }

// maxInSpan returns the most times that fall in one half-open span [x, x+p).
func maxInSpan(ts []time.Duration, p time.Duration) int {
	best, j := 0, 0
	for i := range ts {
		for j < len(ts) && ts[j] < ts[i]+p {
			j++
		}
		best = max(best, j-i)
	}
	return best
}

// perWindow replays the fixed-window rule over arrival times (an inner
// service that is always ready, an alarm handler on time) and returns how
// many calls each window held: a window opens at the first call after the
// last one ended, or, after a full window, at that window's end when the
// call falls within the following period (SPEC RL3, RL4).
func perWindow(ts []time.Duration, n int, p time.Duration) []int {
	var counts []int
	var start time.Duration
	for i, at := range ts {
		if i == 0 || at >= start+p {
			if i > 0 && counts[len(counts)-1] == n && at < start+2*p {
				start += p
			} else {
				start = at
			}
			counts = append(counts, 0)
		}
		counts[len(counts)-1]++
	}
	return counts
}

// durations builds a slice of durations from multiples of unit.
func durations(unit time.Duration, ks ...int) []time.Duration {
	out := make([]time.Duration, len(ks))
	for i, k := range ks {
		out[i] = time.Duration(k) * unit
	}
	return out
}

func reserve(t *testing.T, s troupe.Service[int, int], n int) []*troupe.Permit[int, int] {
	t.Helper()
	ps := make([]*troupe.Permit[int, int], n)
	for i := range ps {
		p, err := s.Reserve(context.Background())
		require.NoError(t, err)
		ps[i] = p
	}
	return ps
}

func newRL(t *testing.T, inner troupe.Service[int, int], r ratelimit.Rate, opts ...ratelimit.Option) *ratelimit.RateLimit[int, int] {
	t.Helper()
	rl, err := ratelimit.New[int, int](troupetest.NewSystem(t), inner, r, opts...)
	require.NoError(t, err)
	return rl
}

// stallFunc is an always-ready inner service whose readiness check can
// hold the stage's actor busy for a while: the stage's alarm message then
// waits, and its handler runs late, deterministically (a busy or
// descheduled actor, made visible to synctest's clock). It implements
// stagekit.Inner itself, delegating the call to a FuncService.
type stallFunc struct {
	f     *actors.FuncService[int, int]
	stall atomic.Int64 // how long the next TryReserve sleeps
}

var _ stagekit.Inner[int, int] = (*stallFunc)(nil)

func (s *stallFunc) Reserve(ctx context.Context) (*troupe.Permit[int, int], error) {
	return s.f.Reserve(ctx)
}

func (s *stallFunc) TryReserve() (bool, error) {
	if d := time.Duration(s.stall.Swap(0)); d > 0 {
		time.Sleep(d)
	}
	return s.f.ActorsInner().TryReserve()
}

func (s *stallFunc) ReserveAsync(*stagekit.Waiter) (bool, error) { return s.TryReserve() }
func (s *stallFunc) CancelWait(*stagekit.Waiter) bool            { return false }
func (s *stallFunc) Unreserve()                                  {}
func (s *stallFunc) Send(e *stagekit.Envelope[int, int])         { s.f.ActorsInner().Send(e) }
