package balance

import (
	"context"
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/internal/opt"
	"github.com/troupe-go/troupe/supervisor"
)

// Source is where a balancer's endpoints come from: a channel of changes
// (Channel) or a function polled for the keys that should be in the set
// (Poll). New runs it until the balancer closes.
//
// Sources are plain values, safe for concurrent use.
type Source[K comparable, Req, Res any] interface {
	check() error
	run(ctx context.Context, b *Balancer[K, Req, Res])
}

// Op says what a Change does.
//
// A plain value, safe for concurrent use.
type Op uint8

// The changes.
const (
	// Insert adds the Change's Service under its Key, replacing (and
	// removing) the one there.
	Insert Op = iota + 1
	// Remove removes the endpoint under the Change's Key (see
	// Balancer.Remove).
	Remove
)

// Change is one event of a discovery channel.
//
// A plain value, safe for concurrent use.
type Change[K comparable, Req, Res any] struct {
	Op      Op
	Key     K
	Service troupe.Service[Req, Res] // for Insert
	// Owned, for Insert, hands the service to the balancer: it closes it
	// once it is removed and drained, or when the balancer closes.
	Owned bool
}

// Channel returns a source that applies the changes received on ch, in
// order, until ch is closed or the balancer closes. An Insert with a nil
// Service and an unknown Op are ignored. A nil ch is New's error.
func Channel[K comparable, Req, Res any](ch <-chan Change[K, Req, Res]) Source[K, Req, Res] {
	return chanSource[K, Req, Res]{ch}
}

type chanSource[K comparable, Req, Res any] struct {
	ch <-chan Change[K, Req, Res]
}

func (s chanSource[K, Req, Res]) check() error {
	if s.ch == nil {
		return opt.Nil("balance", "Channel")
	}
	return nil
}

func (s chanSource[K, Req, Res]) run(ctx context.Context, b *Balancer[K, Req, Res]) {
	for {
		select {
		case c, ok := <-s.ch:
			if !ok {
				return
			}
			switch {
			case c.Op == Insert && c.Service != nil:
				b.insert(c.Key, c.Service, c.Owned)
			case c.Op == Remove:
				b.Remove(c.Key)
			}
		case <-ctx.Done():
			return
		}
	}
}

// Poll returns a source that asks list for the keys that should be in the
// set at once and then every interval: a key new to it gets the endpoint
// build makes for it, which the balancer owns (it closes it once removed
// and drained), and a key it inserted that list no longer gives is
// removed. A list error leaves the set as it is until the next poll; a
// build error leaves the key out until a later poll builds it. A nil list
// or build, or an interval that is not positive, is New's error.
//
// Poll removes only the endpoints it inserted: one that Insert put under
// the same key since is left alone (and Poll takes the key back only once
// its list has dropped the key and given it again).
func Poll[K comparable, Req, Res any](every time.Duration, list func(context.Context) ([]K, error), build func(K) (troupe.Service[Req, Res], error)) Source[K, Req, Res] {
	return pollSource[K, Req, Res]{every, list, build}
}

type pollSource[K comparable, Req, Res any] struct {
	every time.Duration
	list  func(context.Context) ([]K, error)
	build func(K) (troupe.Service[Req, Res], error)
}

func (s pollSource[K, Req, Res]) check() error {
	switch {
	case s.list == nil:
		return opt.Nil("balance", "Poll's list function")
	case s.build == nil:
		return opt.Nil("balance", "Poll's build function")
	case s.every <= 0:
		return opt.Bad("balance", "Poll", s.every, "the interval must be positive")
	}
	return nil
}

func (s pollSource[K, Req, Res]) run(ctx context.Context, b *Balancer[K, Req, Res]) {
	t := time.NewTicker(s.every)
	defer t.Stop()
	mine := map[K]*endpoint[K, Req, Res]{} // what this source inserted
	for {
		if keys, err := s.list(ctx); err == nil {
			s.sync(b, mine, keys)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// sync makes the keys this source inserted be keys.
func (s pollSource[K, Req, Res]) sync(b *Balancer[K, Req, Res], mine map[K]*endpoint[K, Req, Res], keys []K) {
	want := make(map[K]bool, len(keys))
	for _, k := range keys {
		want[k] = true
		if _, ok := mine[k]; ok {
			continue
		}
		svc, err := s.build(k)
		if err != nil || svc == nil {
			continue
		}
		if ep := b.insert(k, svc, true); ep != nil {
			mine[k] = ep
		}
	}
	for k, ep := range mine {
		if !want[k] {
			b.removeIf(ep)
			delete(mine, k)
		}
	}
}

// removeIf removes ep when it is still in the set.
func (b *Balancer[K, Req, Res]) removeIf(ep *endpoint[K, Req, Res]) {
	b.mu.Lock()
	if b.eps[ep.key] != ep {
		b.mu.Unlock()
		return
	}
	held := b.removeLocked(ep)
	b.mu.Unlock()
	b.drain(ep, held)
}

// Pipelines returns a build function for Poll that makes each key's
// endpoint a supervised pipeline in sys (supervisor.New, named by the key),
// from the stack build(key) makes: each endpoint its own stages (a limit,
// a breaker, a reconnect), restarted by its own supervisor. A nil sys is
// each build's error; a nil build is an error of each call too.
func Pipelines[K comparable, Req, Res any](sys *actors.System, build func(key K) supervisor.Build[Req, Res], opts ...supervisor.Option) func(K) (troupe.Service[Req, Res], error) {
	return func(key K) (troupe.Service[Req, Res], error) {
		if build == nil {
			return nil, opt.Nil("balance.Pipelines", "the build function")
		}
		p, err := supervisor.New(sys, fmt.Sprint(key), build(key), opts...)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
}
