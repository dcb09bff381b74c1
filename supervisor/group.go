package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/internal/ilist"
	"github.com/troupe-go/troupe/internal/opt"
)

// ErrGroupClosed is returned by Get once the group is closed.
var ErrGroupClosed = errors.New("supervisor: group closed")

// The defaults of a Group's bounds.
const (
	// DefaultIdleTTL is how long a key's pipeline may go without a Get
	// before the group closes it, by default.
	DefaultIdleTTL = 10 * time.Minute
	// DefaultMaxKeys is how many pipelines a group keeps at most, by
	// default.
	DefaultMaxKeys = 1024
)

// Group keeps one pipeline per key (a downstream: a host, a shard), built
// on first use by build, each with its own supervisor: a failing or dead
// downstream never blocks another, and stopping one stops only it.
//
// What it keeps is bounded: a pipeline that no Get asked for during the
// idle TTL is closed and forgotten, and beyond the maximum of keys the
// least recently used one is (both closed on a goroutine of the group's,
// which Close waits for). Get a key's pipeline for each use (a map lookup)
// rather than holding it: a pipeline held and used without Get for longer
// than the TTL is closed under its user. A key whose pipeline failed for
// good, or was closed, gets a new one from its next Get (build runs again).
//
// It is safe for concurrent use.
type Group[K comparable, Req, Res any] struct {
	sys   *actors.System
	build func(key K) Build[Req, Res]
	cfg   groupConfig

	mu      sync.Mutex
	ps      map[K]*entry[K, Req, Res]      // guarded by mu
	lru     ilist.List[entry[K, Req, Res]] // guarded by mu; by last use, least recent first
	timer   *time.Timer                    // guarded by mu; armed for the front's expiry, nil when none
	closed  bool                           // guarded by mu
	closing sync.WaitGroup                 // pipelines being closed on the group's goroutines
}

// entry is one key's pipeline, built once; ready is closed when p or err is
// set (then they are read-only).
type entry[K comparable, Req, Res any] struct {
	ilist.Links[entry[K, Req, Res]] // in the group's lru; guarded by the group's mu
	key                             K
	ready                           chan struct{}
	p                               *Pipeline[Req, Res]
	err                             error
	used                            time.Time // guarded by mu: the last Get, or the build's end
	gone                            bool      // guarded by mu: taken out of the group (Stop, Close, eviction)
}

// GroupOption configures a Group.
//
// Options are plain values, safe for concurrent use.
type GroupOption func(*groupConfig)

type groupConfig struct {
	ttl   time.Duration
	max   int
	popts []Option
}

// IdleTTL sets how long a key's pipeline may go without a Get before the
// group closes and forgets it (default DefaultIdleTTL); it must be
// positive.
func IdleTTL(d time.Duration) GroupOption { return func(c *groupConfig) { c.ttl = d } }

// MaxKeys sets how many pipelines the group keeps at most (default
// DefaultMaxKeys): a Get of a new key beyond it closes the least recently
// used one first. It must be at least 1.
func MaxKeys(n int) GroupOption { return func(c *groupConfig) { c.max = n } }

// WithPipeline sets the options every pipeline of the group is made with
// (see New).
func WithPipeline(opts ...Option) GroupOption {
	return func(c *groupConfig) { c.popts = append(c.popts, opts...) }
}

// NewGroup returns a group whose pipeline for a key is built by build(key),
// in sys. A nil sys, build or option, a TTL that is not positive and a
// maximum below 1 are errors matching troupe.ErrBadConfig.
func NewGroup[K comparable, Req, Res any](sys *actors.System, build func(key K) Build[Req, Res], opts ...GroupOption) (*Group[K, Req, Res], error) {
	c := groupConfig{ttl: DefaultIdleTTL, max: DefaultMaxKeys}
	if err := opt.Apply("supervisor.NewGroup", &c, opts); err != nil {
		return nil, err
	}
	switch {
	case sys == nil:
		return nil, opt.Nil("supervisor.NewGroup", "the system")
	case build == nil:
		return nil, opt.Nil("supervisor.NewGroup", "the build function")
	case c.ttl <= 0 || c.max < 1:
		return nil, opt.Bad("supervisor.NewGroup", "IdleTTL and MaxKeys", fmt.Sprintf("%v and %d", c.ttl, c.max), "need IdleTTL > 0 and MaxKeys >= 1")
	}
	for i, o := range c.popts {
		if o == nil {
			return nil, opt.Nil("supervisor.NewGroup", fmt.Sprintf("pipeline option %d of %d", i+1, len(c.popts)))
		}
	}
	return &Group[K, Req, Res]{sys: sys, build: build, cfg: c, ps: map[K]*entry[K, Req, Res]{}}, nil
}

// Get returns key's pipeline, building it if needed. Callers asking for a
// key being built wait for it (their ctx bounds the wait); callers of other
// keys do not. A pipeline that failed for good, or was closed, is replaced:
// Get builds a new one.
func (g *Group[K, Req, Res]) Get(ctx context.Context, key K) (*Pipeline[Req, Res], error) {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil, ErrGroupClosed
	}
	e, ok := g.ps[key]
	if ok && e.ended() {
		g.takeOut(e)
		ok = false
	}
	if ok {
		e.used = time.Now()
		g.lru.Remove(&e.Links)
		g.lru.Push(e, &e.Links)
		g.mu.Unlock()
		select {
		case <-e.ready:
			return e.p, e.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	for g.lru.Len() >= g.cfg.max {
		g.takeOut(g.lru.Front()) // the least recently used
	}
	e = &entry[K, Req, Res]{key: key, ready: make(chan struct{}), used: time.Now()}
	g.ps[key] = e
	g.lru.Push(e, &e.Links)
	g.armLocked()
	g.mu.Unlock()

	p, err := New(g.sys, fmt.Sprint(key), g.build(key), g.cfg.popts...)
	g.mu.Lock()
	e.p, e.err = p, err
	close(e.ready)
	gone := e.gone
	switch {
	case gone:
	case err != nil:
		g.forget(e) // the next Get tries again
	default:
		e.used = time.Now()
	}
	g.mu.Unlock()
	if gone && err == nil {
		return nil, &troupe.ClosedError{Service: "supervisor: pipeline " + p.Name()} // the group's goroutine closes it
	}
	return p, err
}

// ended reports whether e's pipeline is built and failed for good or was
// closed.
func (e *entry[K, Req, Res]) ended() bool {
	select {
	case <-e.ready:
		return e.p != nil && e.p.ended()
	default:
		return false
	}
}

// forget takes e out of the map and the lru (mu held).
func (g *Group[K, Req, Res]) forget(e *entry[K, Req, Res]) {
	if g.ps[e.key] == e {
		delete(g.ps, e.key)
	}
	if e.Listed() {
		g.lru.Remove(&e.Links)
	}
}

// takeOut forgets e and closes its pipeline on a goroutine of the group's,
// once it is built (mu held).
func (g *Group[K, Req, Res]) takeOut(e *entry[K, Req, Res]) {
	g.forget(e)
	e.gone = true
	g.closeLater(e)
}

// closeLater closes e's pipeline on a goroutine of the group's, once it is
// built: it drains what it still runs (Close waits for these goroutines).
func (g *Group[K, Req, Res]) closeLater(e *entry[K, Req, Res]) {
	g.closing.Go(func() {
		<-e.ready
		if e.p != nil {
			_ = e.p.Close(context.Background())
		}
	})
}

// armLocked arms the timer for the least recently used pipeline's expiry,
// if it is not armed (mu held).
func (g *Group[K, Req, Res]) armLocked() {
	if g.timer != nil || g.lru.Len() == 0 {
		return
	}
	g.timer = time.AfterFunc(time.Until(g.lru.Front().used.Add(g.cfg.ttl)), g.expire)
}

// expire closes the pipelines idle for the TTL, then arms the timer for the
// next.
func (g *Group[K, Req, Res]) expire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.timer = nil
	if g.closed {
		return
	}
	now := time.Now()
	for e := g.lru.Front(); e != nil && !now.Before(e.used.Add(g.cfg.ttl)); e = g.lru.Front() {
		g.takeOut(e)
	}
	g.armLocked()
}

// Keys returns the keys with a pipeline.
func (g *Group[K, Req, Res]) Keys() []K {
	g.mu.Lock()
	defer g.mu.Unlock()
	keys := make([]K, 0, len(g.ps))
	for k := range g.ps {
		keys = append(keys, k)
	}
	return keys
}

// Stop closes key's pipeline and forgets it; the next Get builds a new one.
// It honours ctx: while the pipeline is still being built, and as it
// closes (see Pipeline.Close). When ctx ends before the build does, Stop
// returns ctx's error and the group closes the pipeline once it is built.
func (g *Group[K, Req, Res]) Stop(ctx context.Context, key K) error {
	g.mu.Lock()
	e, ok := g.ps[key]
	if ok {
		g.forget(e)
		e.gone = true
	}
	g.mu.Unlock()
	if !ok {
		return nil
	}
	return g.closeEntry(ctx, e)
}

// closeEntry closes the pipeline of e, taken out already, within ctx; when
// ctx ends before its build does, a goroutine of the group's closes it.
func (g *Group[K, Req, Res]) closeEntry(ctx context.Context, e *entry[K, Req, Res]) error {
	select {
	case <-e.ready:
	case <-ctx.Done():
		g.closeLater(e)
		return ctx.Err()
	}
	if e.p == nil {
		return nil
	}
	return e.p.Close(ctx)
}

// Close closes every pipeline and waits for those the group is closing;
// Get fails from then on. It honours ctx as Stop does, and returns its
// error when ctx ends first.
func (g *Group[K, Req, Res]) Close(ctx context.Context) error {
	g.mu.Lock()
	g.closed = true
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	var es []*entry[K, Req, Res]
	for e := g.lru.Front(); e != nil; e = g.lru.Front() {
		g.forget(e)
		e.gone = true
		es = append(es, e)
	}
	g.mu.Unlock()
	var errs []error
	for _, e := range es {
		errs = append(errs, g.closeEntry(ctx, e))
	}
	done := make(chan struct{})
	go func() {
		g.closing.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, ctx.Err())
	}
	return errors.Join(errs...)
}
