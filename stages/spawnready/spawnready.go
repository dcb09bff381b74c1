package spawnready

import (
	"context"
	"fmt"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
)

// SpawnReady is a running spawn-ready stage: a troupe.Service and a
// troupe.Closer. It is safe for concurrent use.
type SpawnReady[Req, Res any] struct {
	stagekit.Handle[Req, Res]
}

// Option configures a SpawnReady.
//
// Options are plain values, safe for concurrent use.
type Option func(*stagekit.Config)

// Capacity sets the number of slots of the stage's mailbox (default 1): one
// request waits for the background readiness wait, the others for a slot.
func Capacity(n int) Option { return func(c *stagekit.Config) { c.Capacity = n } }

// New spawns a stage over inner, in host h (nil is an error),
// whose waits for inner's readiness each run on a goroutine of their own.
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], opts ...Option) (*SpawnReady[Req, Res], error) {
	cfg := stagekit.Config{Name: "spawnready", Capacity: 1}
	if err := opt.Apply("spawnready", &cfg, opts); err != nil {
		return nil, err
	}
	if _, err := stagekit.CheckCapacity("spawnready", cfg.Capacity); err != nil {
		return nil, err
	}
	if inner == nil {
		return nil, opt.Nil("spawnready", "inner service")
	}
	st, err := stagekit.Spawn[Req, Res](h, cfg, plain[Req, Res]{inner}, stagekit.Passthrough[Req, Res]{})
	if err != nil {
		return nil, fmt.Errorf("spawnready: %w", err)
	}
	return &SpawnReady[Req, Res]{stagekit.NewHandle(st, nil)}, nil
}

// Layer returns a layer that puts a SpawnReady over the service inside it.
func Layer[Req, Res any](opts ...Option) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New(h, inner, opts...)
	})
}

// plain hides every method of a service but Reserve, so that stagekit.Spawn
// adapts it with stagekit.Adapt (a goroutine per readiness wait) even when
// the service implements stagekit.Inner itself. NOTE: relies on stagekit.AsInner
// choosing Adapt for a service without the Inner methods (actors/inner.go).
type plain[Req, Res any] struct{ svc troupe.Service[Req, Res] }

func (p plain[Req, Res]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	return p.svc.Reserve(ctx)
}
