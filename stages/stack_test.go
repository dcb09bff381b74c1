package stages_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

var errOdd = errors.New("odd")

// spec: API1, API5
func TestAPI1_EveryBuiltInStageWithTheTypesNamedOnce(t *testing.T) {
	sys := troupetest.NewSystem(t)
	api := actors.Func(func(_ context.Context, v int) (int, error) { return v * 2, nil })
	even := func(v int) (int, error) {
		if v%2 != 0 {
			return v, errOdd
		}
		return v, nil
	}
	base := stages.Stack[int, int]().Limit(8).Named("sessions").Timeout(time.Second)
	st, err := base.
		Filter(even).
		AsyncFilter(func(_ context.Context, v int) (int, error) { return v + 1, nil }).
		Retry(2, nil).
		Buffer(4).
		SpawnReady().
		LoadShed().
		RateLimit(ratelimit.Rate{Num: 100, Per: time.Second}).
		Build(sys, api)
	require.NoError(t, err)
	var names []string
	for _, s := range st.Stages() {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"sessions", "timeout", "filter", "asyncfilter", "retry", "buffer", "spawnready", "loadshed", "ratelimit"}, names)
	out, err := troupe.Do(context.Background(), st, 4)
	require.NoError(t, err)
	assert.Equal(t, 10, out, "filtered, changed by the check, doubled")
	_, err = troupe.Do(context.Background(), st, 3)
	var rej *filter.RejectedError
	assert.ErrorAs(t, err, &rej)
	require.NoError(t, st.Close(context.Background()))

	other, err := base.Build(sys, api) // the partial builder is unchanged
	require.NoError(t, err)
	assert.Len(t, other.Stages(), 2)
	require.NoError(t, other.Close(context.Background()))

	_, err = stages.Stack[int, int]().Limit(0).Build(sys, api)
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
}
