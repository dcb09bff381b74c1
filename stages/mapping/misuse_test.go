package mapping_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/mapping"
	"github.com/troupe-go/troupe/troupetest"
)

// A panic in a combinator's function is that call's *troupe.PanicError,
// naming the combinator, by the one-step path and through a permit; the
// service goes on serving.
//
// spec: BAL4
func TestAPanicInAFunctionIsTheCallsOutcome(t *testing.T) {
	fails := actors.Func(func(_ context.Context, v int) (int, error) {
		if v < 0 {
			return 0, context.Canceled
		}
		return v, nil
	})
	boom := func(v int) {
		if v == 13 {
			panic("unlucky")
		}
	}
	req, err := mapping.Request(fails, func(_ context.Context, v int) (int, error) { boom(v); return v, nil })
	require.NoError(t, err)
	res, err := mapping.Response(fails, func(v int) (int, error) { boom(v); return v, nil })
	require.NoError(t, err)
	er, err := mapping.Err(fails, func(error) error { boom(13); return nil })
	require.NoError(t, err)
	at, err := mapping.AndThen(fails, func(_ context.Context, v int) (int, error) { boom(v); return v, nil })
	require.NoError(t, err)
	ctx := context.Background()
	for name, tc := range map[string]struct {
		svc troupe.Service[int, int]
		bad int
	}{"mapping.Request": {req, 13}, "mapping.Response": {res, 13}, "mapping.Err": {er, -1}, "mapping.AndThen": {at, 13}} {
		_, err := troupe.Do(ctx, tc.svc, tc.bad)
		var pe *troupe.PanicError
		require.ErrorAs(t, err, &pe, name)
		assert.Equal(t, name, pe.Where)
		assert.NotEmpty(t, pe.Stack)
		p, err := tc.svc.Reserve(ctx)
		require.NoError(t, err)
		_, err = p.Call(ctx, tc.bad)
		assert.ErrorIs(t, err, troupe.ErrPanic, name)
		v, err := troupe.Do(ctx, tc.svc, 2)
		require.NoError(t, err, name)
		assert.Equal(t, 2, v)
	}
}

// A nil function or inner service is an error matching
// troupe.ErrBadConfig at construction, and a layer's at Build.
//
// spec: BAL4
func TestNilFunctionsAreConfigErrors(t *testing.T) {
	inner := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	sys := troupetest.NewSystem(t)
	build := func(l troupe.Layer[int, int]) error {
		_, err := stages.Stack[int, int]().Layer(l).Build(sys, inner)
		return err
	}
	for name, mk := range map[string]func() error{
		"Request":       func() error { _, err := mapping.Request[int, int, int](inner, nil); return err },
		"Response":      func() error { _, err := mapping.Response[int, int, int](inner, nil); return err },
		"Err":           func() error { _, err := mapping.Err[int, int](inner, nil); return err },
		"AndThen":       func() error { _, err := mapping.AndThen[int, int, int](inner, nil); return err },
		"nil inner":     func() error { _, err := mapping.Err[int, int](nil, troupe.Permanent); return err },
		"RequestLayer":  func() error { return build(mapping.RequestLayer[int, int](nil)) },
		"ResponseLayer": func() error { return build(mapping.ResponseLayer[int, int](nil)) },
		"ErrLayer":      func() error { return build(mapping.ErrLayer[int, int](nil)) },
		"AndThenLayer":  func() error { return build(mapping.AndThenLayer[int, int](nil)) },
	} {
		err := mk()
		var ce *troupe.ConfigError
		assert.ErrorAs(t, err, &ce, name)
		assert.ErrorIs(t, err, troupe.ErrBadConfig, name)
	}
}
