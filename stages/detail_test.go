package stages_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/fallback"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupetest"
)

// Every stage with counters of its own gives them as its Stats' Detail,
// the same value as its accessor; the others give none.
//
// spec: API5
func TestAPI5_StagesGiveTheirOwnCountersAsTheirStatsDetail(t *testing.T) {
	sys := troupetest.NewSystem(t)
	ctx := context.Background()
	api := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	st, err := stages.Stack[int, int]().
		Fallback(func(_ context.Context, v int, _ error) (int, error) { return v, nil }).
		Breaker().
		Limit(4).
		Timeout(time.Second).
		Retry(1, nil).
		Hedge(hedge.Delay(time.Hour)).
		Adaptive().
		RateLimit(ratelimit.Rate{Num: 100, Per: time.Second}).
		Build(sys, api)
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close(ctx)) }()
	_, err = troupe.Do(ctx, st, 1)
	require.NoError(t, err)

	detail := func(name string) any {
		s, ok := st.Stats(name)
		require.True(t, ok, name)
		return s.Detail
	}
	assert.Equal(t, fallback.Counts{}, detail("fallback"))
	assert.IsType(t, breaker.Snapshot{}, detail("breaker"))
	assert.Nil(t, detail("limit"))
	assert.Nil(t, detail("timeout"))
	assert.Equal(t, retry.Sessions{}, detail("retry"))
	h, ok := detail("hedge").(hedge.Counts)
	require.True(t, ok, "%T", detail("hedge"))
	assert.Zero(t, h.Hedges)
	a, ok := detail("adaptive").(adaptive.Snapshot)
	require.True(t, ok, "%T", detail("adaptive"))
	assert.Positive(t, a.Limit)
	r, ok := detail("ratelimit").(ratelimit.Snapshot)
	require.True(t, ok, "%T", detail("ratelimit"))
	assert.Equal(t, 99, r.Remaining, "one unit spent")

	dial := func(context.Context, string) (troupe.Service[int, int], error) { return api, nil }
	rc, err := reconnect.New(sys, reconnect.Dialer(dial), "peer")
	require.NoError(t, err)
	defer func() { require.NoError(t, rc.Close(ctx)) }()
	_, err = troupe.Do(ctx, rc, 1)
	require.NoError(t, err)
	assert.Equal(t, reconnect.Counters{Connects: 1}, rc.Stats().Detail)
	assert.Equal(t, rc.Counters(), rc.Stats().Detail)
}
