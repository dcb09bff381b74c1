package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupetest"
)

// embedded is a policy built on Attempts, as troupehttp's is.
type embedded struct {
	retry.Attempts[int, int]
}

// spec: HR4
func TestHR4_NegativeMaxIsAnErrorAtConstruction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		leaf := actors.Func(func(context.Context, int) (int, error) { return 0, nil })

		_, err := retry.New(sys, leaf, retry.Attempts[int, int]{Max: -1})
		ce := troupetest.BadOption(t, err, "retry", "Attempts.Max")
		assert.ErrorContains(t, err, "must not be negative")
		assert.Equal(t, -1, ce.Value)

		_, err = retry.New(sys, leaf, embedded{retry.Attempts[int, int]{Max: -3}})
		assert.ErrorIs(t, err, troupe.ErrBadConfig, "a policy embedding Attempts is checked too")

		_, err = troupe.NewBuilder[int, int]().Layer(retry.Layer[int, int](retry.Attempts[int, int]{Max: -1})).Build(sys, leaf)
		assert.ErrorIs(t, err, troupe.ErrBadConfig, "and through its layer")

		r, err := retry.New(sys, leaf, retry.Attempts[int, int]{Max: 0})
		require.NoError(t, err, "0 means no retry")
		require.NoError(t, r.Close(context.Background()))
	})
}

// spec: RT2
func TestRT2_ExhaustedForEveryMaxIncludingZero(t *testing.T) {
	for max := range 4 {
		synctest.Test(t, func(t *testing.T) {
			sys := troupetest.NewSystem(t)
			cause := errors.New("503")
			calls := 0
			leaf := actors.Func(func(context.Context, int) (int, error) { calls++; return 0, cause })
			r, err := retry.New(sys, leaf, retry.Attempts[int, int]{Max: max})
			require.NoError(t, err)
			_, err = troupe.Do[int, int](context.Background(), r, 1)
			assert.ErrorIs(t, err, retry.ErrExhausted, "Max %d", max)
			assert.ErrorIs(t, err, cause, "Max %d: the last attempt's error is wrapped", max)
			var ex *retry.ExhaustedError
			require.ErrorAs(t, err, &ex)
			assert.Equal(t, max+1, ex.Attempts)
			assert.Equal(t, max+1, calls)
		})
	}
}

// spec: RT2
func TestRT2_ARetryableResponseAtTheCapIsReturnedAsIs(t *testing.T) {
	a := retry.Attempts[int, int]{Max: 0, Retryable: func(res int, _ error) bool { return res == 503 }}
	req, res := 1, 503
	var err error
	_, again := a.Retry(&req, &res, &err)
	assert.False(t, again)
	assert.NoError(t, err, "a response is not an error")
	assert.Equal(t, 503, res)
}
