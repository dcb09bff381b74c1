package balance_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/balance"
)

// sorry answers every call with the response -1, a nil error: an
// endpoint that answers "unavailable" rather than failing.
func sorry() *actors.FuncService[int, int] {
	return actors.Func(func(context.Context, int) (int, error) { return -1, nil })
}

// negative is a Classify function: a response below zero is a failure,
// and so is every error.
func negative(res int, err error) bool { return err != nil || res < 0 }

// A response is a success to the balancer unless Classify says it is a
// failure: then it counts in the endpoint's Errors and puts it in its
// cooldown, where it loses every pair to an endpoint that is not.
//
// spec: BAL1
func TestAResponseClassifiedAsAFailureCountsAgainstTheEndpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ok counted
		for _, classified := range []bool{false, true} {
			var opts []balance.Option[int]
			if classified {
				opts = append(opts, balance.Classify(negative))
			}
			bal := newBalancer(t, map[string]troupe.Service[int, int]{"sorry": sorry()}, opts...)
			res, err := troupe.Do[int, int](context.Background(), bal, 1)
			require.NoError(t, err, "the balancer hands on the response as it is")
			assert.Equal(t, -1, res)
			st := stats(bal)["sorry"]
			if !classified {
				assert.Zero(t, st.Errors, "a response is not an error")
				assert.False(t, st.Failing)
				continue
			}
			assert.Equal(t, uint64(1), st.Errors)
			assert.True(t, st.Failing)
			require.True(t, bal.Insert("ok", ok.svc()))
			synctest.Wait()
			for i := range 50 {
				v, err := troupe.Do[int, int](context.Background(), bal, i)
				require.NoError(t, err)
				assert.Equal(t, i, v, "the endpoint in its cooldown loses every pair")
			}
			time.Sleep(balance.DefaultCooldown)
			assert.False(t, stats(bal)["sorry"].Failing, "the cooldown is over")
		}
	})
}

// Classify may call an error a success: the endpoint is then not in a
// cooldown for it.
//
// spec: BAL1
func TestAnErrorClassifiedAsNoFailureLeavesTheEndpointOutOfTheCooldown(t *testing.T) {
	notFound := errors.New("not found")
	svc := actors.Func(func(context.Context, int) (int, error) { return 0, notFound })
	bal := newBalancer(t, map[string]troupe.Service[int, int]{"a": svc},
		balance.Classify(func(_ int, err error) bool { return err != nil && !errors.Is(err, notFound) }))
	_, err := troupe.Do[int, int](context.Background(), bal, 1)
	assert.ErrorIs(t, err, notFound)
	st := stats(bal)["a"]
	assert.Zero(t, st.Errors)
	assert.False(t, st.Failing)
}

// A panic in Classify's function is the call's outcome, an error matching
// troupe.ErrPanic and the call's own, and a failure of the endpoint; the
// call is no longer in flight.
//
// spec: BAL1
func TestAPanicInClassifyIsTheCallsOutcome(t *testing.T) {
	svc := actors.Func(func(context.Context, int) (int, error) { return 0, errDown })
	bal := newBalancer(t, map[string]troupe.Service[int, int]{"a": svc},
		balance.Classify(func(int, error) bool { panic("classify") }))
	_, err := troupe.Do[int, int](context.Background(), bal, 1)
	assert.ErrorIs(t, err, troupe.ErrPanic)
	assert.ErrorIs(t, err, errDown)
	p, err := bal.Reserve(context.Background())
	require.NoError(t, err)
	_, err = p.Call(context.Background(), 1)
	assert.ErrorIs(t, err, troupe.ErrPanic, "through a permit too")
	st := stats(bal)["a"]
	assert.Equal(t, uint64(2), st.Errors)
	assert.Zero(t, st.Pending)
}
