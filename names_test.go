package troupe_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/timeout"
)

// spec: API5
func TestAPI5_StagesAreNamedByKindPositionOrByTheUser(t *testing.T) {
	sys := newSystem(t)
	api := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	st, err := troupe.NewBuilder[int, int]().
		Layer(troupe.Named("sessions", limit.Layer[int, int](20))).
		Layer(timeout.Layer[int, int](10*time.Second)).
		Layer(retry.Layer[int, int](retry.Attempts[int, int]{Max: 3})).
		Layer(timeout.Layer[int, int](time.Second)).
		Layer(ratelimit.Layer[int, int](ratelimit.Rate{Num: 5, Per: time.Second})).
		Build(sys, api)
	require.NoError(t, err)
	var names []string
	for _, s := range st.Stages() {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"sessions", "timeout-2", "retry", "timeout-4", "ratelimit"}, names,
		"kinds, numbered by position where a kind repeats, or the name given")

	_, err = troupe.Do(context.Background(), st, 7)
	require.NoError(t, err)
	s, ok := st.Stats("ratelimit")
	require.True(t, ok)
	snap, ok := s.Detail.(ratelimit.Snapshot)
	require.True(t, ok, "the stage's own snapshot: %T", s.Detail)
	assert.Equal(t, 4, snap.Remaining)
	s, ok = st.Stats("sessions")
	require.True(t, ok)
	assert.Equal(t, 20, s.Capacity)
	_, ok = st.Stats("limit")
	assert.False(t, ok, "renamed")
	r, ok := st.Stats("retry")
	require.True(t, ok)
	assert.Equal(t, retry.Sessions{}, r.Detail)

	require.NoError(t, st.Close(context.Background()))
	_, err = troupe.Do(context.Background(), st, 7)
	var ce *troupe.ClosedError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "sessions", ce.Service, "errors name the stage")
}

// spec: API5
func TestAPI5_BuilderNamedNamesTheLayerAddedLastAndLeavesTheBuilderItCameFrom(t *testing.T) {
	sys := newSystem(t)
	api := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	base := troupe.NewBuilder[int, int]().Named("nothing yet").
		Layer(limit.Layer[int, int](20)).
		Layer(timeout.Layer[int, int](time.Second))
	named := base.Named("deadline")
	stageNames := func(b troupe.Builder[int, int]) []string {
		st, err := b.Build(sys, api)
		require.NoError(t, err)
		defer func() { require.NoError(t, st.Close(context.Background())) }()
		var names []string
		for _, s := range st.Stages() {
			names = append(names, s.Name)
		}
		return names
	}
	assert.Equal(t, []string{"limit", "deadline"}, stageNames(named))
	assert.Equal(t, []string{"limit", "timeout"}, stageNames(base), "a builder is immutable: Named made a new one")
}

// spec: API5
func TestAPI5_NamedOutsideABuildAndNestedTheInnermostNameWins(t *testing.T) {
	sys := newSystem(t)
	api := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	for _, c := range []struct {
		l    troupe.Layer[int, int]
		want string
	}{
		{troupe.Named("solo", limit.Layer[int, int](5)), "solo"},
		{troupe.Named("outer", troupe.Named("inner", limit.Layer[int, int](5))), "inner"},
	} {
		svc, err := c.l.Layer(sys, api)
		require.NoError(t, err)
		info, ok := svc.(troupe.StageInfo)
		require.True(t, ok, "%T", svc)
		assert.Equal(t, c.want, info.Name())
		require.NoError(t, svc.(troupe.Closer).Close(context.Background()))
	}
}

// spec: EG7
func TestAnEmptyOrRepeatedStageNameIsAnErrorAtBuild(t *testing.T) {
	sys := newSystem(t)
	api := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	lim := limit.Layer[int, int](2)
	to := timeout.Layer[int, int](time.Second)
	for name, b := range map[string]troupe.Builder[int, int]{
		"empty name":                  troupe.NewBuilder[int, int]().Layer(lim).Named(""),
		"two stages named alike":      troupe.NewBuilder[int, int]().Layer(lim).Named("x").Layer(to).Named("x"),
		"a name that is another kind": troupe.NewBuilder[int, int]().Layer(lim).Named("timeout").Layer(to),
		"a name the numbering gives":  troupe.NewBuilder[int, int]().Layer(to).Layer(lim).Named("timeout-3").Layer(to),
	} {
		st, err := b.Build(sys, api)
		assert.ErrorIs(t, err, troupe.ErrBadConfig, name)
		assert.Nil(t, st, name)
	}
	st, err := troupe.NewBuilder[int, int]().Layer(to).Layer(lim).Named("timeout-9").Layer(to).Build(sys, api)
	require.NoError(t, err, "names that differ")
	var names []string
	for _, s := range st.Stages() {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"timeout-1", "timeout-9", "timeout-3"}, names)
	require.NoError(t, st.Close(context.Background()))
}

// spec: EG7
func TestBuildingInANilHostIsAnError(t *testing.T) {
	api := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	_, err := troupe.NewBuilder[int, int]().Layer(limit.Layer[int, int](2)).Build(nil, api)
	assert.ErrorIs(t, err, troupe.ErrBadConfig, "the root builder")
	_, err = limit.New[int, int](nil, api, 2)
	assert.ErrorIs(t, err, troupe.ErrBadConfig, "a stage's constructor")
	var sys *actors.System
	_, err = timeout.New[int, int](sys, api, time.Second)
	assert.ErrorIs(t, err, troupe.ErrBadConfig, "a nil *System")
	st, err := troupe.NewBuilder[int, int]().Layer(limit.Layer[int, int](2)).Build(actors.Default(), api)
	require.NoError(t, err, "the default system, named")
	require.NoError(t, st.Close(context.Background()))
}
