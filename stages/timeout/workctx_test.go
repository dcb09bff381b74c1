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
// stage's deadline to the nanosecond while the work runs. Once the call
// has its outcome, the context lives on as long as the caller's own (its
// outcome, a response body say, may still be read with it): neither the
// call's end nor the stage's deadline ends it, and the caller's
// cancellation does, with a context derived from it. The same under a
// limit, where the call entered by another stage.
//
// spec: T1, T3, HR2, EG13
func TestTheWorksContextOutlivesItsCallUntilTheCallersEnds(t *testing.T) {
	for _, under := range []string{"alone", "under a limit"} {
		t.Run(under, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := troupetest.NewSystem(t)
				var kept context.Context
				var during error
				var dlDuring time.Time
				f := actors.Func(func(ctx context.Context, v int) (int, error) {
					kept, during = ctx, ctx.Err()
					dlDuring, _ = ctx.Deadline()
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
				caller, cancel := context.WithCancel(context.Background())
				v, err := troupe.Do(caller, svc, 7)
				require.NoError(t, err)
				assert.Equal(t, 7, v)
				require.NoError(t, during, "the context is live while the work runs")
				assert.Equal(t, start.Add(3*time.Second), dlDuring)

				derived, stop := context.WithCancel(kept)
				defer stop()
				done := kept.Done()
				time.Sleep(time.Hour) // far past the stage's deadline
				assert.NoError(t, kept.Err(), "the call's end does not end its work's context")
				assert.NoError(t, derived.Err())
				if _, ok := kept.Deadline(); ok {
					t.Error("the stage's deadline no longer applies once the call has its outcome")
				}
				select {
				case <-done:
					t.Fatal("Done closed while the caller's context lives")
				default:
				}
				cancel()
				synctest.Wait()
				<-done
				assert.ErrorIs(t, kept.Err(), context.Canceled, "the caller's cancellation ends it")
				assert.ErrorIs(t, derived.Err(), context.Canceled, "and a context derived from it")
			})
		})
	}
}
