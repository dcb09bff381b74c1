package limit

import (
	"fmt"

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
}

// New spawns a stage that lets at most n requests be in flight below it, in
// host h (nil is an error).
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], n int) (*Limit[Req, Res], error) {
	if n < 1 || n > actors.MaxCapacity {
		return nil, opt.Bad("limit", "Limit", n, fmt.Sprintf("need 1 to %d", actors.MaxCapacity))
	}
	cfg := stagekit.Config{Name: "limit", Capacity: n, HoldUntilOutcome: true, CallerPath: true}
	st, err := stagekit.Spawn(h, cfg, inner, stagekit.Passthrough[Req, Res]{})
	if err != nil {
		return nil, fmt.Errorf("limit: %w", err)
	}
	return &Limit[Req, Res]{stagekit.NewHandle(st, nil)}, nil
}

// Layer returns a layer that limits the requests in flight below it to n.
func Layer[Req, Res any](n int) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New(h, inner, n)
	})
}

// Available reports how many permits are free: the limit minus those
// reserved and those whose outcome is not yet delivered.
func (l *Limit[Req, Res]) Available() int {
	s := l.Stats()
	return s.Capacity - s.Used
}
