package supervisor_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/supervisor"
	"github.com/troupe-go/troupe/troupetest"
)

// limited builds, for each key, a limit over an echo, counting the builds.
func limited(builds *atomic.Int64) func(string) supervisor.Build[string, string] {
	return func(key string) supervisor.Build[string, string] {
		return func(h troupe.Host) (troupe.Service[string, string], error) {
			builds.Add(1)
			api := actors.Func(func(_ context.Context, s string) (string, error) { return key + s, nil })
			return stages.Stack[string, string]().Limit(4).Build(h, api)
		}
	}
}

func sorted(keys []string) []string { slices.Sort(keys); return keys }

// doErr is the error of one call through p.
func doErr(p *supervisor.Pipeline[string, string]) error {
	_, err := troupe.Do(context.Background(), p, "?")
	return err
}

func isClosed(err error) bool { return errors.Is(err, troupe.ErrClosed) }

// spec: EG9
func TestAGroupClosesAPipelineNoGetAskedForDuringItsTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var builds atomic.Int64
		g, err := supervisor.NewGroup(troupetest.NewSystem(t), limited(&builds), supervisor.IdleTTL(time.Minute))
		require.NoError(t, err)
		ctx := context.Background()
		a, err := g.Get(ctx, "a")
		require.NoError(t, err)
		b, err := g.Get(ctx, "b")
		require.NoError(t, err)
		time.Sleep(30 * time.Second)
		_, err = g.Get(ctx, "a") // a is used
		require.NoError(t, err)
		time.Sleep(40 * time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"a"}, g.Keys(), "b was idle for 70 s")
		assert.True(t, isClosed(doErr(b)), "and is closed")
		assert.False(t, isClosed(doErr(a)))

		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Empty(t, g.Keys(), "a too, a minute after its last Get")
		assert.True(t, isClosed(doErr(a)))
		again, err := g.Get(ctx, "a")
		require.NoError(t, err)
		assert.NotSame(t, a, again)
		assert.EqualValues(t, 3, builds.Load(), "a new pipeline for a key that came back")
		require.NoError(t, g.Close(ctx))
	})
}

// spec: EG9
func TestAGroupKeepsAtMostMaxKeysClosingTheLeastRecentlyUsed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var builds atomic.Int64
		g, err := supervisor.NewGroup(troupetest.NewSystem(t), limited(&builds), supervisor.MaxKeys(2))
		require.NoError(t, err)
		ctx := context.Background()
		_, err = g.Get(ctx, "a")
		require.NoError(t, err)
		b, err := g.Get(ctx, "b")
		require.NoError(t, err)
		_, err = g.Get(ctx, "a")
		require.NoError(t, err)
		_, err = g.Get(ctx, "c")
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, []string{"a", "c"}, sorted(g.Keys()), "b, the least recently used, made room for c")
		assert.True(t, isClosed(doErr(b)))
		require.NoError(t, g.Close(ctx))
	})
}

// spec: EG9
func TestAGroupRebuildsAPipelineThatStoppedForGood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var builds atomic.Int64
		sys := troupetest.NewSystem(t)
		delays, err := backoff.New(time.Millisecond, time.Second)
		require.NoError(t, err)
		mocks := map[int64]*troupetest.Handle[string, string]{}
		g, err := supervisor.NewGroup(sys, func(string) supervisor.Build[string, string] {
			return func(h troupe.Host) (troupe.Service[string, string], error) {
				mock, handle := troupetest.NewMock[string, string]()
				mocks[builds.Add(1)] = handle
				return stages.Stack[string, string]().Buffer(2).Build(h, mock)
			}
		}, supervisor.WithPipeline(supervisor.WithBackoff(delays, 0, time.Minute)))
		require.NoError(t, err)
		ctx := context.Background()

		p, err := g.Get(ctx, "k")
		require.NoError(t, err)
		require.NoError(t, p.Close(ctx))
		p2, err := g.Get(ctx, "k")
		require.NoError(t, err)
		assert.NotSame(t, p, p2, "a closed pipeline is replaced")

		mocks[2].PanicOnReady("bug") // no restart allowed: the stage stops for good
		_, err = troupe.Do(ctx, p2, "x")
		require.Error(t, err)
		synctest.Wait()
		require.ErrorIs(t, p2.Err(), supervisor.ErrFailed)
		p3, err := g.Get(ctx, "k")
		require.NoError(t, err)
		assert.NotSame(t, p2, p3, "a failed pipeline is replaced")
		mocks[3].Allow(1)
		c := troupetest.Go(ctx, p3, "y")
		mocks[3].Next(ctx).Respond("Y")
		assert.Equal(t, troupetest.Result[string]{Value: "Y"}, <-c)
		assert.EqualValues(t, 3, builds.Load())
		require.NoError(t, g.Close(ctx))
	})
}

// spec: EG9
func TestAGroupsStopAndCloseHonourTheirContextWhileAPipelineIsBuilt(t *testing.T) {
	for _, how := range []string{"Stop", "Close"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				var built *troupe.Stack[string, string]
				g, err := supervisor.NewGroup(troupetest.NewSystem(t), func(string) supervisor.Build[string, string] {
					return func(h troupe.Host) (troupe.Service[string, string], error) {
						<-release // a slow build: a dial, a lookup
						api := actors.Func(func(_ context.Context, s string) (string, error) { return s, nil })
						var err error
						built, err = stages.Stack[string, string]().Limit(1).Build(h, api)
						return built, err
					}
				})
				require.NoError(t, err)
				ctx := context.Background()
				got := make(chan error, 1)
				go func() { _, err := g.Get(ctx, "k"); got <- err }()
				synctest.Wait()

				sctx, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				start := time.Now()
				if how == "Stop" {
					err = g.Stop(sctx, "k")
				} else {
					err = g.Close(sctx)
				}
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Equal(t, time.Second, time.Since(start), "it returned when its context ended")

				close(release)
				assert.ErrorIs(t, <-got, troupe.ErrClosed, "the Get that built it hears it was taken out")
				synctest.Wait()
				_, err = troupe.Do(ctx, built, "x")
				assert.ErrorIs(t, err, troupe.ErrClosed, "the group closed the pipeline once it was built")
				require.NoError(t, g.Close(ctx))
			})
		})
	}
}
