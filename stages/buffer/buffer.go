package buffer

import (
	"errors"
	"fmt"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
)

// Buffer is a running buffer stage: a troupe.Service and a troupe.Closer.
type Buffer[Req, Res any] struct {
	*actors.Stage[Req, Res]
}

// ErrBadCapacity is returned for a buffer capacity below 1; it matches
// actors.ErrBadConfig.
var ErrBadCapacity = fmt.Errorf("%w: buffer capacity must be at least 1", actors.ErrBadConfig)

// New spawns a buffer of the given capacity over inner, in host h (nil means
// the default system).
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], capacity int) (*Buffer[Req, Res], error) {
	if capacity < 1 {
		return nil, ErrBadCapacity
	}
	st, err := actors.Spawn(h, actors.Config{Name: "buffer", Capacity: capacity}, inner, actors.Passthrough[Req, Res]{})
	if err != nil {
		return nil, errors.Join(errors.New("buffer: spawn"), err)
	}
	return &Buffer[Req, Res]{st}, nil
}

// Layer returns a layer that puts a buffer of the given capacity over the
// service inside it.
func Layer[Req, Res any](capacity int) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New(h, inner, capacity)
	})
}
