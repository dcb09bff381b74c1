package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/troupe-go/troupe/actors"
)

// ErrGroupClosed is returned by Get once the group is closed.
var ErrGroupClosed = errors.New("supervisor: group closed")

// Group keeps one pipeline per key (a downstream: a host, a shard), built
// on first use by build, each with its own supervisor: a failing or dead
// downstream never blocks another, and stopping one stops only it.
// It is safe for concurrent use.
type Group[K comparable, Req, Res any] struct {
	sys   *actors.System
	build func(key K) Build[Req, Res]
	opts  []Option

	mu     sync.Mutex
	ps     map[K]*entry[Req, Res] // guarded by mu
	closed bool                   // guarded by mu
}

// entry is one key's pipeline, built once; ready is closed when p or err is set.
type entry[Req, Res any] struct {
	ready chan struct{}
	p     *Pipeline[Req, Res]
	err   error
}

// NewGroup returns a group whose pipeline for a key is built by build(key),
// in sys, with opts.
func NewGroup[K comparable, Req, Res any](sys *actors.System, build func(key K) Build[Req, Res], opts ...Option) *Group[K, Req, Res] {
	return &Group[K, Req, Res]{sys: sys, build: build, opts: opts, ps: map[K]*entry[Req, Res]{}}
}

// Get returns key's pipeline, building it if needed. Callers asking for a
// key being built wait for it (their ctx bounds the wait); callers of other
// keys do not. A pipeline that failed for good stays until Stop(key).
func (g *Group[K, Req, Res]) Get(ctx context.Context, key K) (*Pipeline[Req, Res], error) {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil, ErrGroupClosed
	}
	e, ok := g.ps[key]
	if !ok {
		e = &entry[Req, Res]{ready: make(chan struct{})}
		g.ps[key] = e
		g.mu.Unlock()
		e.p, e.err = New(g.sys, fmt.Sprint(key), g.build(key), g.opts...)
		close(e.ready)
		if e.err != nil {
			g.mu.Lock()
			if g.ps[key] == e {
				delete(g.ps, key) // the next Get tries again
			}
			g.mu.Unlock()
		}
		return e.p, e.err
	}
	g.mu.Unlock()
	select {
	case <-e.ready:
		return e.p, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
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
func (g *Group[K, Req, Res]) Stop(ctx context.Context, key K) error {
	g.mu.Lock()
	e, ok := g.ps[key]
	delete(g.ps, key)
	g.mu.Unlock()
	if !ok {
		return nil
	}
	<-e.ready
	if e.p == nil {
		return nil
	}
	return e.p.Close(ctx)
}

// Close closes every pipeline; Get fails from then on.
func (g *Group[K, Req, Res]) Close(ctx context.Context) error {
	g.mu.Lock()
	g.closed = true
	es := g.ps
	g.ps = map[K]*entry[Req, Res]{}
	g.mu.Unlock()
	var errs []error
	for _, e := range es {
		<-e.ready
		if e.p != nil {
			errs = append(errs, e.p.Close(ctx))
		}
	}
	return errors.Join(errs...)
}
