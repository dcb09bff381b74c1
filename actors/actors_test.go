package actors_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

// What a user needs of the runtime is in package actors: a system, a host
// with a strategy, and the innermost service.
//
// spec: API2, API3
func TestAPI2_ASystemAHostAndAFunctionFromPackageActors(t *testing.T) {
	sys := actors.NewSystem()
	host, err := sys.NewHost("api", actors.Intensity(3, time.Minute))
	require.NoError(t, err)
	api := actors.Func(func(_ context.Context, v int) (int, error) { return v + 1, nil }, "api")
	st, err := stages.Stack[int, int]().Limit(2).Build(host, api)
	require.NoError(t, err)
	out, err := troupe.Do(context.Background(), st, 41)
	require.NoError(t, err)
	assert.Equal(t, 42, out)
	d := actors.Intensity(1, time.Minute).Decide(actors.NewFailure("limit", "boom", time.Now(), time.Now()))
	assert.Equal(t, actors.Stop, d.Directive, "two failures in the window, one allowed")
	require.NoError(t, sys.Shutdown(context.Background()))
}
