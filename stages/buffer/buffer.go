package buffer

import (
	"fmt"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
)

// Buffer is a running buffer stage: a troupe.Service and a troupe.Closer.
// It is safe for concurrent use.
type Buffer[Req, Res any] struct {
	stagekit.Handle[Req, Res]
}

// New spawns a buffer of the given capacity over inner, in host h (nil is an
// error).
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], capacity int) (*Buffer[Req, Res], error) {
	if capacity < 1 || capacity > actors.MaxCapacity {
		return nil, opt.Bad("buffer", "Buffer", capacity, fmt.Sprintf("need 1 to %d slots", actors.MaxCapacity))
	}
	st, err := stagekit.Spawn(h, stagekit.Config{Name: "buffer", Capacity: capacity}, inner, stagekit.Passthrough[Req, Res]{})
	if err != nil {
		return nil, fmt.Errorf("buffer: %w", err)
	}
	return &Buffer[Req, Res]{stagekit.NewHandle(st, nil)}, nil
}

// Layer returns a layer that puts a buffer of the given capacity over the
// service inside it.
func Layer[Req, Res any](capacity int) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New(h, inner, capacity)
	})
}
