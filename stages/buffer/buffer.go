package buffer

import (
	"fmt"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// Buffer is a running buffer stage: a troupe.Service and a troupe.Closer.
// It is safe for concurrent use.
type Buffer[Req, Res any] struct {
	stagekit.Handle[Req, Res]
}

// ErrBadCapacity is matched by the error for a buffer capacity below 1 or above actors.MaxCapacity; it matches
// troupe.ErrBadConfig.
var ErrBadCapacity = fmt.Errorf("%w: buffer capacity must be between 1 and actors.MaxCapacity", troupe.ErrBadConfig)

// New spawns a buffer of the given capacity over inner, in host h (nil is an
// error).
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], capacity int) (*Buffer[Req, Res], error) {
	if capacity < 1 || capacity > actors.MaxCapacity {
		return nil, fmt.Errorf("%w: got %d, want 1 to %d", ErrBadCapacity, capacity, actors.MaxCapacity)
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
