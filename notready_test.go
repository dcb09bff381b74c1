package troupe_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/spawnready"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// row is one line of the seed's table (003): a tower middleware called
// without poll_ready, and what tower did.
type row struct {
	stage string
	tower string
	build func(h troupe.Host, inner troupe.Service[int, int]) (troupe.Service[int, int], error)
}

var notReadyTable = []row{
	{"Timeout", "Ok(7)", func(h troupe.Host, in troupe.Service[int, int]) (troupe.Service[int, int], error) {
		return timeout.New(h, in, time.Second)
	}},
	{"ConcurrencyLimit", "panic: max requests in-flight; poll_ready must be called first", func(h troupe.Host, in troupe.Service[int, int]) (troupe.Service[int, int], error) {
		return limit.New(h, in, 1)
	}},
	{"RateLimit", "Ok(7), then panic once the window is spent", func(h troupe.Host, in troupe.Service[int, int]) (troupe.Service[int, int], error) {
		return ratelimit.New(h, in, ratelimit.Rate{Num: 1, Per: time.Second})
	}},
	{"LoadShed", `Err("service overloaded")`, func(h troupe.Host, in troupe.Service[int, int]) (troupe.Service[int, int], error) {
		return loadshed.New(h, in)
	}},
	{"Buffer", "panic: `send_item` called without first calling `poll_reserve`", func(h troupe.Host, in troupe.Service[int, int]) (troupe.Service[int, int], error) {
		return buffer.New(h, in, 1)
	}},
	{"Filter", "Ok(7)", func(h troupe.Host, in troupe.Service[int, int]) (troupe.Service[int, int], error) {
		return filter.NewFilter(h, in, func(v int) (int, error) { return v, nil })
	}},
	{"AsyncFilter", "untested", func(h troupe.Host, in troupe.Service[int, int]) (troupe.Service[int, int], error) {
		return filter.NewAsync(h, in, func(_ context.Context, v int) (int, error) { return v, nil })
	}},
	{"SpawnReady", "Ok(7)", func(h troupe.Host, in troupe.Service[int, int]) (troupe.Service[int, int], error) {
		return spawnready.New(h, in)
	}},
	{"Reconnect", "panic: service not ready; poll_ready must be called first", func(h troupe.Host, in troupe.Service[int, int]) (troupe.Service[int, int], error) {
		return reconnect.New(h, reconnect.Dialer(func(context.Context, string) (troupe.Service[int, int], error) { return in, nil }), "peer")
	}},
	{"Retry", "Ok(7)", func(h troupe.Host, in troupe.Service[int, int]) (troupe.Service[int, int], error) {
		return retry.New(h, in, retry.Attempts[int, int]{Max: 3})
	}},
}

// spec: CORE2, CORE3
func TestNotReadyTable(t *testing.T) {
	echo := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	for _, r := range notReadyTable {
		t.Run(r.stage, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				svc, err := r.build(newSystem(t), echo)
				require.NoError(t, err)

				// Calling without readiness cannot be written: the handle
				// has no call method, nor the Inner side's, which would
				// spend capacity never reserved.
				typ := reflect.TypeOf(svc)
				for _, m := range []string{"Call", "Send", "Unreserve", "Release"} {
					_, has := typ.MethodByName(m)
					assert.False(t, has, "tower: %s; troupe: %s has no %s method", r.tower, typ, m)
				}
				if m, has := typ.MethodByName("TryReserve"); has { // the reservation that never waits: a permit too
					assert.Equal(t, reflect.TypeFor[*troupe.Permit[int, int]](), m.Type.Out(0), "%s's TryReserve gives a permit", typ)
				}

				// With a permit it works; the permit is spent once, and
				// its reuse is an error value, never a panic.
				ctx := context.Background()
				p, err := svc.Reserve(ctx)
				require.NoError(t, err)
				require.NotPanics(t, func() {
					v, err := p.Call(ctx, 7)
					require.NoError(t, err)
					assert.Equal(t, 7, v)
					_, err = p.Call(ctx, 7)
					assert.ErrorIs(t, err, troupe.ErrPermitUsed)
					assert.ErrorIs(t, p.Release(), troupe.ErrPermitUsed)
				})
				q, err := svc.Reserve(ctx)
				require.NoError(t, err)
				require.NoError(t, q.Release())
				_, err = q.Call(ctx, 7)
				assert.ErrorIs(t, err, troupe.ErrPermitUsed, "a call after release")
			})
		})
	}
}

// spec: CORE2
func TestNotReadyTable_CallWithoutPermitDoesNotCompile(t *testing.T) {
	out := compileFails(t, `package misuse

import (
	"context"

	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/spawnready"
	"github.com/troupe-go/troupe/stages/timeout"
)

func Misuse(ctx context.Context, b *buffer.Buffer[int, int], l *limit.Limit[int, int], rl *ratelimit.RateLimit[int, int],
	rc *reconnect.Reconnect[int, int], to *timeout.Timeout[int, int], ls *loadshed.LoadShed[int, int],
	f *filter.Filter[int, int], sr *spawnready.SpawnReady[int, int], r *retry.Retry[int, int]) {
	b.Call(ctx, 7)
	l.Call(ctx, 7)
	rl.Call(ctx, 7)
	rc.Call(ctx, 7)
	to.Call(ctx, 7)
	ls.Call(ctx, 7)
	f.Call(ctx, 7)
	sr.Call(ctx, 7)
	r.Call(ctx, 7)
}
`)
	for _, v := range []string{"b", "l", "rl", "rc", "to", "ls", "f", "sr", "r"} {
		assert.Contains(t, out, v+".Call undefined", "where tower panics or misbehaves, troupe does not compile")
	}
	assert.Equal(t, 9, strings.Count(out, ".Call undefined"), out)
}

// spec: LS2
func TestNotReadyTable_LoadShedIsTheOneErrorValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, _ := troupetest.NewMock[int, int]() // never ready
		ls, err := loadshed.New[int, int](newSystem(t), mock)
		require.NoError(t, err)
		ctx := context.Background()
		waiting := troupetest.Go[int, int](ctx, ls, 1) // fills LoadShed, waiting for the inner service
		synctest.Wait()
		p, err := ls.Reserve(ctx)
		require.NoError(t, err, "reserving LoadShed never waits")
		_, err = p.Call(ctx, 7)
		assert.ErrorIs(t, err, loadshed.ErrOverloaded, "tower's one error row is an error here too")
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_ = ls.Close(cctx)
		assert.ErrorIs(t, (<-waiting).Err, troupe.ErrClosed)
	})
}
