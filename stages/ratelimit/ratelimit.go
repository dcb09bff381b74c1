package ratelimit

import (
	"errors"
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
)

// RateLimit is a running rate limit stage: a troupe.Service and a
// troupe.Closer. One limiter serves every caller of the stage and every copy
// of its handle (tower's RateLimit cannot be shared across clones; this
// one is a single actor). It is safe for concurrent use.
type RateLimit[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	b    *behavior[Req, Res]       // nil with a Remote limiter
	rb   *remoteBehavior[Req, Res] // nil without
	rate Rate
}

// Option configures a RateLimit.
//
// Options are plain values, safe for concurrent use.
type Option func(*config)

type config struct {
	capacity  int
	smooth    bool
	burst     int
	remote    Limiter
	hasRemote bool
	asks      int
	asksSet   bool
	maxWait   time.Duration
	cost      any // func(Req) int, checked by New
	costSet   bool
}

// Capacity sets the stage's mailbox capacity: how many requests may wait in
// the stage for their turn before reservations wait. The default, 0, sets
// no limit of its own: the stage admits what the stages outside it admit.
func Capacity(n int) Option { return func(c *config) { c.capacity = n } }

// Smooth replaces the fixed window with the smooth mode: calls
// are spaced one interval (Per/Num) apart, and up to burst of them may go
// at once after a quiet spell. burst must be at least 1.
func Smooth(burst int) Option { return func(c *config) { c.smooth, c.burst = true, burst } }

// MaxWait bounds how long a caller waits for its turn (failsafe-go's rate
// limiter WithMaxWaitTime): one whose turn, the unit after those the stage
// keeps plus one per request queued or waiting ahead of it, comes more
// than d after it finds the stage Limited is refused at once with a
// *LimitedError saying when that turn would come (it matches ErrLimited
// and troupe.ErrFull). It holds for a Reserve, a call through the stage
// (troupe.Do), a request the stage outside parks for a unit (that stage
// answers it with the refusal and carries on), and a request the stage
// takes while Limited. 0, the default, waits as long as the caller does;
// negative is an error matching troupe.ErrBadConfig, as is MaxWait with
// Remote (the remote limiter's turns are not known in advance).
func MaxWait(d time.Duration) Option { return func(c *config) { c.maxWait = d } }

// New spawns a stage that lets at most r.Num requests per r.Per through to
// inner, in host h (nil is an error). By default the limit is
// a fixed window, tower's semantics; see Smooth for the other
// mode, and Remote for a limiter shared with other processes. A bad rate,
// burst, capacity or remote limiter is an error matching
// troupe.ErrBadConfig.
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], r Rate, opts ...Option) (*RateLimit[Req, Res], error) {
	lim, cfg, err := build(r, opts)
	if err != nil {
		return nil, err
	}
	if cfg.hasRemote {
		return newRemote(h, inner, r, cfg)
	}
	b := newBehavior[Req, Res](lim)
	cost, ok := opt.As[func(Req) int](cfg.cost)
	switch {
	case !ok:
		return nil, opt.Bad("ratelimit", "Cost", fmt.Sprintf("%T", cfg.cost), "need a func of the stage's request type returning int")
	case cfg.costSet && cost == nil:
		return nil, opt.Nil("ratelimit", "Cost")
	}
	if cost != nil || cfg.maxWait != 0 {
		b.opts = &options[Req]{maxWait: cfg.maxWait, cost: cost}
	}
	callerPath := spares(lim) && cost == nil // a cost is the actor's to spend
	st, err := stagekit.Spawn[Req, Res](h, stagekit.Config{Name: "ratelimit", Capacity: cfg.capacity, CallerPath: callerPath}, inner, b)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: %w", err)
	}
	b.attach(st)
	rl := &RateLimit[Req, Res]{b: b, rate: r}
	rl.Handle = stagekit.NewHandle(st, nil)
	return rl, nil
}

// newRemote spawns a stage that asks cfg.remote for its units.
func newRemote[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], r Rate, cfg config) (*RateLimit[Req, Res], error) {
	b := newRemoteBehavior[Req, Res](cfg.remote, cfg.asks)
	st, err := stagekit.Spawn[Req, Res](h, stagekit.Config{Name: "ratelimit", Capacity: cfg.capacity}, inner, b)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: %w", err)
	}
	b.attach(st)
	rl := &RateLimit[Req, Res]{rb: b, rate: r}
	rl.Handle = stagekit.NewHandle(st, nil)
	return rl, nil
}

// build checks the configuration and makes its limiter.
func build(r Rate, opts []Option) (limiter, config, error) {
	cfg := config{}
	if err := opt.Apply("ratelimit", &cfg, opts); err != nil {
		return nil, cfg, err
	}
	if err := r.check(); err != nil {
		return nil, cfg, err
	}
	if _, err := stagekit.CheckCapacity("ratelimit", cfg.capacity); err != nil {
		return nil, cfg, err
	}
	if err := cfg.checkRemote(r); err != nil {
		return nil, cfg, err
	}
	if cfg.costSet && cfg.hasRemote {
		return nil, cfg, opt.Bad("ratelimit", "Cost", nil, "Cost and Remote do not combine")
	}
	if cfg.maxWait < 0 || cfg.maxWait != 0 && cfg.hasRemote {
		return nil, cfg, opt.Bad("ratelimit", "MaxWait", cfg.maxWait, "need 0 (no maximum) or more, and no Remote limiter")
	}
	if cfg.hasRemote {
		return nil, cfg, nil
	}
	if !cfg.smooth {
		return newWindow(r), cfg, nil
	}
	if err := r.checkBurst(cfg.burst); err != nil {
		return nil, cfg, err
	}
	return newGCRA(r, cfg.burst), cfg, nil
}

// Layer returns a layer that limits the rate of requests reaching the
// service inside it to r.
func Layer[Req, Res any](r Rate, opts ...Option) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New(h, inner, r, opts...)
	})
}

// Rate returns the stage's rate: the last one SetRate set, or New's.
func (l *RateLimit[Req, Res]) Rate() Rate {
	if l.b == nil {
		return l.rate
	}
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	return l.b.lim.rate()
}

// Limited reports whether the stage is Limited: no unit is left until the
// current window ends (or, in smooth mode, until the next interval), so
// reservations wait and queued requests stay queued.
// With a Remote limiter, it is Limited from a refusal (or a last unit)
// until the time the limiter gave.
func (l *RateLimit[Req, Res]) Limited() bool {
	if l.rb != nil {
		return l.rb.isLimited()
	}
	return l.b.isLimited()
}

// TryReserve returns a permit at once, or refuses at once: while the
// stage is Limited with a *LimitedError saying when the next unit comes
// (matching ErrLimited and troupe.ErrFull), when its own capacity is full
// with an error matching troupe.ErrFull. It never waits (failsafe-go's
// TryAcquirePermit). The unit is spent when the permit's call goes.
func (l *RateLimit[Req, Res]) TryReserve() (*troupe.Permit[Req, Res], error) {
	p, err := l.Handle.TryReserve()
	if err == nil || !errors.Is(err, troupe.ErrFull) {
		return p, err
	}
	if s := l.Snapshot(); s.Limited {
		return nil, &LimitedError{RetryAfter: max(time.Until(s.Until), 0)}
	}
	return nil, err
}

// Snapshot returns the limiter's state now.
func (l *RateLimit[Req, Res]) Snapshot() Snapshot {
	if l.rb != nil {
		return l.rb.snapshot()
	}
	return l.b.snapshot(time.Now())
}
