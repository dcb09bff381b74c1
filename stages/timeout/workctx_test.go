package timeout_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// The caller's work runs with the timeout's own context: it carries the
// stage's deadline to the nanosecond, and once the call is over it reports
// itself done (Canceled after a success), so that work kept past the call,
// such as a goroutine it started, stops too. The same under a limit, where
// the call entered by another stage.
//
// spec: T1, T3, HR2
func TestT3_TheWorksContextEndsWithItsCall(t *testing.T) {
	for _, under := range []string{"alone", "under a limit"} {
		t.Run(under, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := troupetest.NewSystem(t)
				var kept context.Context
				var during error
				f := actors.Func(func(ctx context.Context, v int) (int, error) {
					kept, during = ctx, ctx.Err()
					return v, nil
				})
				to, err := timeout.New[int, int](sys, f, 3*time.Second)
				require.NoError(t, err)
				var svc troupe.Service[int, int] = to
				if under != "alone" {
					if svc, err = limit.New[int, int](sys, to, 2); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(time.Minute) // the deadline is the call's, not the stage's start
				start := time.Now()
				v, err := troupe.Do(context.Background(), svc, 7)
				require.NoError(t, err)
				assert.Equal(t, 7, v)
				require.NoError(t, during, "the context is live while the work runs")

				dl, ok := kept.Deadline()
				require.True(t, ok)
				assert.Equal(t, start.Add(3*time.Second), dl)
				assert.ErrorIs(t, kept.Err(), context.Canceled, "the call is over")
				select {
				case <-kept.Done():
				default:
					t.Fatal("Done is not closed after the call")
				}
				stopped := make(chan struct{})
				context.AfterFunc(kept, func() { close(stopped) })
				<-stopped // a context derived from it ends at once
			})
		})
	}
}
