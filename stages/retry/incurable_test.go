package retry_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: EG10
func TestAPanicIsNotRetriedUnlessTheStageIsToldTo(t *testing.T) {
	sys := troupetest.NewSystem(t)
	var calls atomic.Int64
	api := actors.Func(func(context.Context, int) (int, error) {
		calls.Add(1)
		panic("a bug in the downstream")
	})
	ctx := context.Background()
	r, err := retry.New[int, int](sys, api, retry.Attempts[int, int]{Max: 2})
	require.NoError(t, err)
	_, err = troupe.Do(ctx, r, 1)
	assert.ErrorIs(t, err, troupe.ErrPanic)
	assert.NotErrorIs(t, err, retry.ErrExhausted, "the panic itself, not retries spent")
	assert.EqualValues(t, 1, calls.Load(), "a panic is a bug: it runs once")

	calls.Store(0)
	r2, err := retry.New[int, int](sys, api, retry.Attempts[int, int]{Max: 2}, retry.RetryPanics())
	require.NoError(t, err)
	_, err = troupe.Do(ctx, r2, 1)
	assert.ErrorIs(t, err, troupe.ErrPanic)
	assert.ErrorIs(t, err, retry.ErrExhausted)
	assert.EqualValues(t, 3, calls.Load(), "told to, it retries panics")

	calls.Store(0)
	r3, err := retry.New[int, int](sys, api, retry.Attempts[int, int]{Max: 2, RetryPanics: true})
	require.NoError(t, err)
	_, err = troupe.Do(ctx, r3, 1)
	assert.ErrorIs(t, err, troupe.ErrPanic)
	assert.EqualValues(t, 3, calls.Load(), "the policy's field does the same")

	_, err = retry.New[string, string](sys, actors.Func(func(_ context.Context, s string) (string, error) { return s, nil }),
		oneRetry{}, retry.RetryPanics())
	assert.ErrorIs(t, err, troupe.ErrBadConfig, "a policy RetryPanics cannot reach")
}

// spec: EG12
func TestAnErrorMarkedPermanentIsNotRetried(t *testing.T) {
	sys := troupetest.NewSystem(t)
	refused := errors.New("400 bad request")
	var calls atomic.Int64
	api := actors.Func(func(context.Context, int) (int, error) {
		calls.Add(1)
		return 0, troupe.Permanent(refused)
	})
	r, err := retry.New[int, int](sys, api, retry.Attempts[int, int]{Max: 3, Retryable: func(int, error) bool { return true }})
	require.NoError(t, err)
	_, err = troupe.Do(context.Background(), r, 1)
	assert.ErrorIs(t, err, refused)
	assert.ErrorIs(t, err, troupe.ErrPermanent)
	assert.NotErrorIs(t, err, retry.ErrExhausted)
	assert.EqualValues(t, 1, calls.Load(), "not even a Retryable that accepts everything retries it")
}
