package troupe_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/troupetest"
)

// recorder is a service that notes its name when it is called, then calls
// the service inside it.
type recorder struct {
	name  string
	inner troupe.Service[int, int]
	log   *[]string
	mu    *sync.Mutex
}

func (r *recorder) Reserve(ctx context.Context) (*troupe.Permit[int, int], error) {
	r.mu.Lock()
	*r.log = append(*r.log, r.name)
	r.mu.Unlock()
	return r.inner.Reserve(ctx)
}

func named(name string, log *[]string, mu *sync.Mutex) troupe.Layer[int, int] {
	return troupe.LayerFunc[int, int](func(_ troupe.Host, inner troupe.Service[int, int]) (troupe.Service[int, int], error) {
		return &recorder{name: name, inner: inner, log: log, mu: mu}, nil
	})
}

// spec: L1
func TestL1_FirstLayerAddedIsOutermost(t *testing.T) {
	sys := newSystem(t)
	var log []string
	var mu sync.Mutex
	base := troupe.NewBuilder[int, int]().Layer(named("a", &log, &mu))
	st, err := base.Layer(named("b", &log, &mu)).Layer(named("c", &log, &mu)).
		Build(sys, actors.Func(func(_ context.Context, v int) (int, error) { return v, nil }))
	require.NoError(t, err)
	_, err = troupe.Do[int, int](context.Background(), st, 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, log)

	// Builders are values: extending base again does not see b and c.
	log = nil
	st2, err := base.Layer(named("z", &log, &mu)).Build(sys, actors.Func(func(_ context.Context, v int) (int, error) { return v, nil }))
	require.NoError(t, err)
	_, err = troupe.Do[int, int](context.Background(), st2, 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "z"}, log)
}

// spec: L1
func TestL1_StagesStackInOrderAndCloseOutermostFirst(t *testing.T) {
	sys := newSystem(t)
	mock, h := troupetest.NewMock[int, int]()
	var built []*buffer.Buffer[int, int] // in the order Build spawns them
	capture := func(n int) troupe.Layer[int, int] {
		return troupe.LayerFunc[int, int](func(h troupe.Host, inner troupe.Service[int, int]) (troupe.Service[int, int], error) {
			b, err := buffer.New(h, inner, n)
			built = append(built, b)
			return b, err
		})
	}
	st, err := troupe.NewBuilder[int, int]().Layer(capture(1)).Layer(capture(2)).Build(sys, mock)
	require.NoError(t, err)
	require.Len(t, built, 2)
	inner, outer := built[0], built[1] // the innermost is built first, over mock
	assert.Same(t, outer, st.Service, "the first layer added is the outermost")
	assert.Equal(t, 1, outer.Stats().Capacity)
	assert.Equal(t, 2, inner.Stats().Capacity)

	h.Allow(1)
	done := make(chan error)
	go func() {
		_, err := troupe.Do[int, int](context.Background(), st, 5)
		done <- err
	}()
	req := h.Next(context.Background())
	assert.Equal(t, 5, req.Value)
	req.Respond(6)
	require.NoError(t, <-done)

	require.NoError(t, st.Close(context.Background()))
	_, err = outer.Reserve(context.Background())
	assert.ErrorIs(t, err, troupe.ErrClosed)
	_, err = inner.Reserve(context.Background())
	assert.ErrorIs(t, err, troupe.ErrClosed)
}

func TestBuildErrorsCloseWhatWasBuilt(t *testing.T) {
	sys := newSystem(t)
	f := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	var built *buffer.Buffer[int, int]
	capture := troupe.LayerFunc[int, int](func(h troupe.Host, inner troupe.Service[int, int]) (troupe.Service[int, int], error) {
		b, err := buffer.New(h, inner, 1)
		built = b
		return b, err
	})
	boom := errors.New("bad layer")
	failing := troupe.LayerFunc[int, int](func(troupe.Host, troupe.Service[int, int]) (troupe.Service[int, int], error) {
		return nil, boom
	})
	_, err := troupe.NewBuilder[int, int]().Layer(failing).Layer(capture).Build(sys, f)
	require.ErrorIs(t, err, boom)
	_, err = built.Reserve(context.Background())
	assert.ErrorIs(t, err, troupe.ErrClosed, "the stage built before the failure was closed")

	_, err = troupe.NewBuilder[int, int]().Layer(buffer.Layer[int, int](0)).Build(sys, f)
	troupetest.BadOption(t, err, "buffer", "Buffer")
	_, err = troupe.NewBuilder[int, int]().Layer(nil).Build(sys, f)
	assert.Error(t, err)
	_, err = troupe.NewBuilder[int, int]().Build(sys, nil)
	assert.Error(t, err)
}
