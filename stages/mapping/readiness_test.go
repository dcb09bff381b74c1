package mapping_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/mapping"
	"github.com/troupe-go/troupe/troupetest"
)

// combinators returns each combinator over inner, with the types kept.
func combinators(t *testing.T, inner troupe.Service[int, int]) map[string]troupe.Service[int, int] {
	t.Helper()
	req, err := mapping.Request(inner, func(_ context.Context, v int) (int, error) { return v, nil })
	require.NoError(t, err)
	res, err := mapping.Response(inner, func(v int) (int, error) { return v, nil })
	require.NoError(t, err)
	er, err := mapping.Err(inner, func(err error) error { return err })
	require.NoError(t, err)
	at, err := mapping.AndThen(inner, func(_ context.Context, v int) (int, error) { return v, nil })
	require.NoError(t, err)
	return map[string]troupe.Service[int, int]{"Request": req, "Response": res, "Err": er, "AndThen": at}
}

// Each combinator's readiness is its inner service's: Reserve waits for an
// inner unit and gives up with its context, the permit holds the unit
// (released with it, spent by its call), and the one-step path waits in
// the inner service's line.
//
// spec: BAL4
func TestEachCombinatorsReadinessIsItsInnerServices(t *testing.T) {
	for _, name := range []string{"Request", "Response", "Err", "AndThen"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := troupetest.NewMock[int, int]()
				svc := combinators(t, mock)[name]
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				start := time.Now()
				_, err := svc.Reserve(ctx)
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Equal(t, time.Second, time.Since(start), "Reserve waited for the inner unit")
				assert.Zero(t, h.Waiting())

				h.Allow(1)
				p, err := svc.Reserve(context.Background())
				require.NoError(t, err)
				assert.Zero(t, h.Allowed(), "the permit holds the inner unit")
				require.NoError(t, p.Release())
				assert.Equal(t, 1, h.Allowed(), "released with it")
				assert.ErrorIs(t, p.Release(), troupe.ErrPermitUsed)

				p, err = svc.Reserve(context.Background())
				require.NoError(t, err)
				res := troupetest.GoWith(context.Background(), p, 5)
				h.Next(context.Background()).Respond(50)
				assert.Equal(t, troupetest.Result[int]{Value: 50}, <-res)
				assert.Zero(t, h.Allowed(), "spent by the call")

				a := troupetest.GoTimed(context.Background(), svc, 6)
				synctest.Wait()
				assert.Equal(t, 1, h.Waiting(), "the one-step call waits in the inner service's line")
				time.Sleep(time.Minute)
				h.Allow(1)
				h.Next(context.Background()).Respond(60)
				assert.Equal(t, troupetest.Timed[int]{Value: 60, Took: time.Minute}, <-a)
			})
		})
	}
}

// Err maps the error of reserving on the inner service too; the other
// combinators pass it on untouched. A mapping that returns nil keeps the
// original error.
//
// spec: BAL4
func TestErrMapsTheInnerServicesReadinessErrorToo(t *testing.T) {
	errDown := errors.New("backend down")
	errMapped := errors.New("unavailable")
	mock, h := troupetest.NewMock[int, int]()
	h.Break(errDown)
	mapped, err := mapping.Err(mock, func(err error) error { return errors.Join(errMapped, err) })
	require.NoError(t, err)
	ctx := context.Background()
	_, err = mapped.Reserve(ctx)
	assert.ErrorIs(t, err, errMapped)
	assert.ErrorIs(t, err, errDown, "the mapping chose to wrap the cause")
	_, err = troupe.Do(ctx, mapped, 1)
	assert.ErrorIs(t, err, errMapped)

	for name, svc := range combinators(t, mock) {
		_, err := svc.Reserve(ctx)
		assert.Equal(t, errDown, err, name)
	}

	keep, err := mapping.Err(mock, func(error) error { return nil })
	require.NoError(t, err)
	_, err = keep.Reserve(ctx)
	assert.Equal(t, errDown, err, "nil from the mapping keeps the error")
	_, err = troupe.Do(ctx, keep, 1)
	assert.Equal(t, errDown, err)
}
