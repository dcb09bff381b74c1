package limit_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/troupetest"
)

// A reservation that never waits: TryReserve takes a free permit or
// refuses at once with an error matching troupe.ErrFull (failsafe-go's
// bulkhead TryAcquirePermit: "should return false when permits are
// exhausted"), and takes one again once a permit is given back.
//
// spec: PP2
func TestTryReserveNeverWaitsAndRefusesWhenFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		api := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
		l, err := limit.New[int, int](troupetest.NewSystem(t), api, 2)
		require.NoError(t, err)
		p1, err := l.TryReserve()
		require.NoError(t, err)
		p2, err := l.TryReserve()
		require.NoError(t, err)
		_, err = l.TryReserve()
		assert.ErrorIs(t, err, troupe.ErrFull)
		assert.Equal(t, 0, l.Available())

		require.NoError(t, p1.Release())
		p3, err := l.TryReserve()
		require.NoError(t, err, "a permit given back is free again")
		v, err := p3.Call(ctx, 7)
		assert.NoError(t, err)
		assert.Equal(t, 7, v)
		require.NoError(t, p2.Release())

		require.NoError(t, l.Close(ctx))
		_, err = l.TryReserve()
		assert.True(t, errors.Is(err, troupe.ErrClosed), "closed: %v", err)
	})
}
