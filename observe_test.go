package troupe_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/limit"
)

// spec: OB1
func TestOB1_OutcomeClasses(t *testing.T) {
	panicked := &troupe.PanicError{Where: "leaf", Value: context.DeadlineExceeded}
	for err, want := range map[error]troupe.Outcome{
		nil:                               troupe.OutcomeSuccess,
		errors.New("boom"):                troupe.OutcomeFailure,
		&troupe.ClosedError{Service: "s"}: troupe.OutcomeFailure,
		context.Canceled:                  troupe.OutcomeCanceled,
		fmt.Errorf("late: %w", context.DeadlineExceeded): troupe.OutcomeTimeout,
		panicked: troupe.OutcomePanic, // a panic first, whatever its value
		&troupe.RestartError{Stage: "s", Cause: panicked}: troupe.OutcomePanic,
	} {
		assert.Equal(t, want, troupe.Classify(err), "%v", err)
	}
	assert.Equal(t, "timed_out", troupe.EventTimedOut.String())
	assert.Equal(t, "unknown", troupe.EventType(0).String())
	assert.Equal(t, "endpoint_drained", troupe.EventEndpointDrained.String())
	assert.Equal(t, "unknown", (troupe.EventEndpointDrained + 1).String())
	assert.Equal(t, "canceled", troupe.OutcomeCanceled.String())
	assert.Equal(t, "overloaded", troupe.ReasonOverloaded.String())
}

// spec: OB1, HR4
func TestOB1_ANilObserverIsBadConfig(t *testing.T) {
	sys := newSystem(t)
	_, err := troupe.NewBuilder[int, int]().Observe(nil, "p").Layer(limit.Layer[int, int](1)).
		Build(sys, actors.Func(func(_ context.Context, v int) (int, error) { return v, nil }))
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
}
