package supervisor_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/supervisor"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: SUP4
func TestSUP4_OnePipelinePerDownstreamFailingIndependently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		// "dead" never answers a dial; "live" connects at once.
		dial := func(ctx context.Context, host string) (troupe.Service[string, string], error) {
			if host == "dead" {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return actors.Func(func(_ context.Context, s string) (string, error) { return host + ": " + s, nil }), nil
		}
		g, err := supervisor.NewGroup(sys, func(host string) supervisor.Build[string, string] {
			return func(h troupe.Host) (troupe.Service[string, string], error) {
				rc, err := reconnect.New(h, reconnect.Dialer(dial), host, reconnect.ConnectTimeout(time.Hour))
				if err != nil {
					return nil, err
				}
				return troupe.NewBuilder[string, string]().Layer(timeout.Layer[string, string](time.Minute)).Build(h, rc)
			}
		})
		require.NoError(t, err)
		ctx := context.Background()
		dead, err := g.Get(ctx, "dead")
		require.NoError(t, err)
		stuck := troupetest.Go[string, string](ctx, dead, "hello")
		synctest.Wait()

		live, err := g.Get(ctx, "live")
		require.NoError(t, err)
		start := time.Now()
		for range 3 {
			out, err := troupe.Do[string, string](ctx, live, "hi")
			require.NoError(t, err)
			assert.Equal(t, "live: hi", out)
		}
		assert.Zero(t, time.Since(start), "a dead downstream never blocks another pipeline")
		again, err := g.Get(ctx, "live")
		require.NoError(t, err)
		assert.Same(t, live, again, "one pipeline per key")
		keys := g.Keys()
		slices.Sort(keys)
		assert.Equal(t, []string{"dead", "live"}, keys)

		sctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		assert.NoError(t, g.Stop(sctx, "dead"), "closing its dial answered what waited for it: it drained at once")
		assert.ErrorIs(t, (<-stuck).Err, troupe.ErrClosed, "stopping one answers what it held")
		out, err := troupe.Do[string, string](ctx, live, "still")
		require.NoError(t, err, "and stops only it")
		assert.Equal(t, "live: still", out)
		assert.Equal(t, []string{"live"}, g.Keys())

		require.NoError(t, g.Close(ctx))
		_, err = g.Get(ctx, "live")
		assert.ErrorIs(t, err, supervisor.ErrGroupClosed)
	})
}

func TestGroupBuildErrorIsReturnedAndRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		calls := 0
		boom := errors.New("no config for this host")
		g, err := supervisor.NewGroup(sys, func(host string) supervisor.Build[int, int] {
			return func(troupe.Host) (troupe.Service[int, int], error) {
				calls++
				return nil, boom
			}
		})
		require.NoError(t, err)
		_, err = g.Get(context.Background(), "x")
		assert.ErrorIs(t, err, boom)
		_, err = g.Get(context.Background(), "x")
		assert.ErrorIs(t, err, boom)
		assert.Equal(t, 2, calls, "a failed build is not remembered")
		assert.Empty(t, g.Keys())
		require.NoError(t, g.Close(context.Background()))
	})
}
