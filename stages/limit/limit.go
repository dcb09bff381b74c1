package limit

import (
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
)

// Limit is a running concurrency-limit stage: a troupe.Service and a
// troupe.Closer.
// It is safe for concurrent use.
type Limit[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	st *stagekit.Stage[Req, Res] // never changed
}

// Option configures a Limit.
//
// Options are plain values, safe for concurrent use.
type Option func(*config)

type config struct {
	maxWait time.Duration
}

// MaxWait bounds how long a caller waits for a permit (failsafe-go's
// bulkhead WithMaxWaitTime): one that waited d is refused with an error
// matching troupe.ErrFull (a *stagekit.WaitError). It holds for a Reserve,
// for a call through the stage (troupe.Do), and for a request the stage
// outside parks for a permit, which that stage answers with the refusal
// and carries on; a Retry's or a Hedge's own wait for a unit is not
// bounded. The caller's context still ends its wait sooner. 0, the
// default, waits as long as the caller does; negative is an error
// matching troupe.ErrBadConfig.
func MaxWait(d time.Duration) Option { return func(c *config) { c.maxWait = d } }

// New spawns a stage that lets at most n requests be in flight below it, in
// host h (nil is an error).
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], n int, opts ...Option) (*Limit[Req, Res], error) {
	if err := checkLimit("Limit", n); err != nil {
		return nil, err
	}
	var c config
	if err := opt.Apply("limit", &c, opts); err != nil {
		return nil, err
	}
	if c.maxWait < 0 {
		return nil, opt.Bad("limit", "MaxWait", c.maxWait, "need 0 (no maximum) or more")
	}
	cfg := stagekit.Config{Name: "limit", Capacity: n, HoldUntilOutcome: true, CallerPath: true, MaxWait: c.maxWait}
	st, err := stagekit.Spawn(h, cfg, inner, stagekit.Passthrough[Req, Res]{})
	if err != nil {
		return nil, fmt.Errorf("limit: %w", err)
	}
	return &Limit[Req, Res]{stagekit.NewHandle(st, nil), st}, nil
}

// Layer returns a layer that limits the requests in flight below it to n.
func Layer[Req, Res any](n int, opts ...Option) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New(h, inner, n, opts...)
	})
}

// checkLimit reports whether n is a limit; the error is a
// *troupe.ConfigError naming option.
func checkLimit(option string, n int) error {
	if n < 1 || n > actors.MaxCapacity {
		return opt.Bad("limit", option, n, fmt.Sprintf("need 1 to %d", actors.MaxCapacity))
	}
	return nil
}

// SetCapacity changes the limit to n while the stack runs, as
// x/time/rate's SetBurst changes a limiter's: raising it lets those
// waiting for a permit go at once, first come first served; lowering it
// takes back no permit already held: the calls in flight finish, and new
// ones wait until fewer than n are in flight. A bad n is an error matching
// troupe.ErrBadConfig and changes nothing. Safe for concurrent use.
func (l *Limit[Req, Res]) SetCapacity(n int) error {
	if err := checkLimit("SetCapacity", n); err != nil {
		return err
	}
	l.st.SetCapacity(n)
	return nil
}

// Available reports how many permits are free: the limit minus those
// reserved and those whose outcome is not yet delivered.
func (l *Limit[Req, Res]) Available() int {
	s := l.Stats()
	return s.Capacity - s.Used
}
