package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/fallback"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

var err503 = errors.New("503")

// failing fails every call with err503, except for request 0.
var failing = actors.Func(func(_ context.Context, v int) (int, error) {
	if v == 0 {
		return 0, nil
	}
	return 0, err503
})

// cached answers a failed call with ten times its request, and records the
// error it was given.
func cached(seen *error) fallback.Func[int, int] {
	return func(_ context.Context, v int, err error) (int, error) {
		*seen = err
		return v * 10, nil
	}
}

// spec: FB1
func TestFB1_AFailureIsAnsweredWithTheFallbacksValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen error
		fb, err := fallback.New(troupetest.NewSystem(t), failing, cached(&seen))
		require.NoError(t, err)
		out, err := troupe.Do(context.Background(), fb, 4)
		require.NoError(t, err)
		assert.Equal(t, 40, out)
		assert.ErrorIs(t, seen, err503, "the fallback gets the failure")

		out, err = troupe.Do(context.Background(), fb, 0)
		require.NoError(t, err, "a success passes unchanged")
		assert.Equal(t, 0, out)
		assert.Equal(t, fallback.Counts{Taken: 1}, fb.Counts())
		assert.Equal(t, fallback.Counts{Taken: 1}, fb.Stats().Detail)
		assert.Equal(t, "fallback", fb.Name())
	})
}

// spec: FB1
func TestFB1_AnErrorWhenRefusesPassesUnchanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen error
		only := fallback.When(func(err error) bool { return !errors.Is(err, err503) })
		fb, err := fallback.New(troupetest.NewSystem(t), failing, cached(&seen), only)
		require.NoError(t, err)
		_, err = troupe.Do(context.Background(), fb, 4)
		assert.Equal(t, err503, err)
		assert.NoError(t, seen, "the fallback did not run")
		assert.Equal(t, fallback.Counts{}, fb.Counts())
	})
}

// spec: FB1
func TestFB1_AnAlternativeServiceAnswersAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		replica := actors.Func(func(_ context.Context, v int) (int, error) { return v + 1000, nil })
		fb, err := fallback.New(sys, failing, fallback.To[int, int](replica))
		require.NoError(t, err)
		out, err := troupe.Do(context.Background(), fb, 7)
		require.NoError(t, err)
		assert.Equal(t, 1007, out)
	})
}

// spec: FB1
func TestFB1_AFailingFallbacksErrorWrapsTheOriginal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errCache := errors.New("cache miss")
		fb, err := fallback.New(troupetest.NewSystem(t), failing, func(context.Context, int, error) (int, error) { return 0, errCache })
		require.NoError(t, err)
		_, err = troupe.Do(context.Background(), fb, 4)
		assert.ErrorIs(t, err, fallback.ErrFailed)
		assert.ErrorIs(t, err, errCache, "the fallback's error")
		assert.ErrorIs(t, err, err503, "and the original one")
		assert.Equal(t, fallback.Counts{Taken: 1, Failed: 1}, fb.Counts())
	})
}

// spec: FB1, HR1
func TestHR1_APanicInTheFallbackOrInWhenIsAnOutcome(t *testing.T) {
	for _, c := range []struct {
		name, where string
		fn          fallback.Func[int, int]
		opts        []fallback.Option[int]
	}{
		{"Func", "fallback: Func", func(context.Context, int, error) (int, error) { panic("fallback bug") }, nil},
		{"When", "fallback: When", func(context.Context, int, error) (int, error) { return 1, nil },
			[]fallback.Option[int]{fallback.When(func(error) bool { panic("classifier bug") })}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fb, err := fallback.New(troupetest.NewSystem(t), failing, c.fn, c.opts...)
				require.NoError(t, err)
				_, err = troupe.Do(context.Background(), fb, 4)
				assert.ErrorIs(t, err, fallback.ErrFailed)
				assert.ErrorIs(t, err, troupe.ErrPanic)
				assert.ErrorIs(t, err, err503, "the original error too")
				var pe *troupe.PanicError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, c.where, pe.Where)
				out, err := troupe.Do(context.Background(), fb, 0)
				require.NoError(t, err, "the stage still serves")
				assert.Equal(t, 0, out)
			})
		})
	}
}

// The fallback runs on the caller's goroutine, not on the stage's actor: a
// fallback that blocks holds up its own caller only.
//
// spec: FB1, CORE6
func TestFB1_AFallbackThatBlocksHoldsUpItsOwnCallerOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		slowCache := func(ctx context.Context, v int, _ error) (int, error) {
			close(entered)
			<-release
			return v * 10, nil
		}
		fb, err := fallback.New(troupetest.NewSystem(t), failing, slowCache)
		require.NoError(t, err)
		first := troupetest.Go(context.Background(), fb, 4)
		<-entered
		out, err := troupe.Do(context.Background(), fb, 0)
		require.NoError(t, err, "another call goes through meanwhile")
		assert.Equal(t, 0, out)
		close(release)
		assert.Equal(t, troupetest.Result[int]{Value: 40}, <-first)
	})
}

// Errors made by stages inside it, on their actors, are answered too: a
// timeout and a request a filter refuses.
//
// spec: FB1, T1, F1
func TestFB1_ItAnswersTheFailuresOfTheStagesInsideIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		hang := actors.Func(func(ctx context.Context, _ int) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
		var seen error
		st, err := stages.Stack[int, int]().Fallback(cached(&seen)).Timeout(time.Second).Build(sys, hang)
		require.NoError(t, err)
		start := time.Now()
		out, err := troupe.Do(context.Background(), st, 3)
		require.NoError(t, err)
		assert.Equal(t, 30, out)
		assert.Equal(t, time.Second, time.Since(start).Round(time.Millisecond), "at the timeout")
		assert.ErrorIs(t, seen, timeout.ErrTimeout)

		odd := func(v int) (int, error) {
			if v%2 == 1 {
				return 0, errors.New("odd")
			}
			return v, nil
		}
		filtered, err := stages.Stack[int, int]().Fallback(cached(&seen)).Filter(odd).Build(sys, failing)
		require.NoError(t, err)
		out, err = troupe.Do(context.Background(), filtered, 5)
		require.NoError(t, err)
		assert.Equal(t, 50, out)
		assert.ErrorIs(t, seen, filter.ErrRejected)
	})
}

// The fallback is given the request as it came to the stage: a Filter
// inside that rewrites requests does not change it, and a Timeout inside
// that forces the outcome while an AsyncFilter below it rewrites the
// request does not hand the fallback a request still being written.
//
// spec: FB1, EG1
func TestTheFallbackIsGivenTheRequestAsItCameToTheStage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		plusOne := func(v int) (int, error) { return v + 1, nil }
		var seen error
		st, err := stages.Stack[int, int]().Fallback(cached(&seen)).Filter(plusOne).Build(sys, failing)
		require.NoError(t, err)
		out, err := troupe.Do(context.Background(), st, 4)
		require.NoError(t, err)
		assert.Equal(t, 40, out, "the fallback got 4, not the 5 the filter sent on")
		assert.ErrorIs(t, seen, err503)

		// The check ignores its context and rewrites the request at the
		// very instant the deadline passes.
		late := func(_ context.Context, v int) (int, error) {
			time.Sleep(time.Second)
			return v + 1, nil
		}
		hang := actors.Func(func(ctx context.Context, _ int) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
		timed, err := stages.Stack[int, int]().Fallback(cached(&seen)).Timeout(time.Second).AsyncFilter(late).Build(sys, hang)
		require.NoError(t, err)
		out, err = troupe.Do(context.Background(), timed, 7)
		require.NoError(t, err)
		assert.Equal(t, 70, out)
		assert.ErrorIs(t, seen, timeout.ErrTimeout)
	})
}

// spec: FB1, CORE6
func TestFB1_NoFallbackOnceTheCallersContextEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen error
		hang := actors.Func(func(ctx context.Context, _ int) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
		fb, err := fallback.New(troupetest.NewSystem(t), hang, cached(&seen))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = troupe.Do(ctx, fb, 4)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		synctest.Wait()
		assert.NoError(t, seen)
		assert.Equal(t, fallback.Counts{}, fb.Counts())
	})
}

// spec: FB1, HR4
func TestHR4_AFallbackNeedsAFunction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		_, err := fallback.New[int, int](sys, failing, nil)
		assert.ErrorIs(t, err, troupe.ErrBadConfig)
		_, err = fallback.New(sys, failing, fallback.To[int, int](nil))
		assert.ErrorIs(t, err, troupe.ErrBadConfig, "nor a nil alternative service")
		_, err = fallback.New(sys, failing, cached(new(error)), fallback.Capacity(-1))
		assert.ErrorIs(t, err, troupe.ErrBadConfig)
	})
}

func ExampleLayer() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	prices := actors.Func(func(_ context.Context, item string) (int, error) {
		return 0, errors.New("prices: 503 Service Unavailable")
	})
	lastKnown := func(_ context.Context, item string, err error) (int, error) {
		return 42, nil // say, the last price seen for item
	}
	svc, _ := stages.Stack[string, int]().
		Fallback(lastKnown).
		Retry(2, nil).
		Build(sys, prices)
	defer svc.Close(ctx)
	price, err := troupe.Do(ctx, svc, "apples")
	fmt.Println(price, err)
	// Output: 42 <nil>
}

// WhenResult decides on the result as well as the error (failsafe-go's
// HandleIf): an empty response is answered by the fallback, which is told
// ErrResult; a panic in it is the call's outcome; a function of the wrong
// types, or a nil one, is New's error.
//
// spec: PP3, FB1
func TestAFallbackMayDecideOnTheResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		empty := actors.Func(func(_ context.Context, v int) (string, error) {
			if v%2 == 0 {
				return "", nil
			}
			return "fresh", nil
		})
		var told error
		stale := func(_ context.Context, v int, err error) (string, error) {
			told = err
			return "stale", nil
		}
		refuseEmpty := fallback.WhenResult(func(res string, err error) bool { return err != nil || res == "" })
		fb, err := fallback.New(sys, empty, stale, refuseEmpty)
		require.NoError(t, err)
		out, err := troupe.Do(context.Background(), fb, 2)
		require.NoError(t, err)
		assert.Equal(t, "stale", out, "an empty response is answered by the fallback")
		assert.ErrorIs(t, told, fallback.ErrResult)
		out, err = troupe.Do(context.Background(), fb, 1)
		require.NoError(t, err)
		assert.Equal(t, "fresh", out)
		assert.Equal(t, fallback.Counts{Taken: 1}, fb.Counts())

		boom := fallback.WhenResult(func(string, error) bool { panic("a bug in WhenResult") })
		fb2, err := fallback.New(sys, empty, stale, boom)
		require.NoError(t, err)
		_, err = troupe.Do(context.Background(), fb2, 1)
		assert.ErrorIs(t, err, fallback.ErrFailed)
		assert.ErrorIs(t, err, troupe.ErrPanic)

		// A function of another response type does not compile; converted
		// by force, it is New's error.
		_, err = fallback.New(sys, empty, stale, fallback.Option[string](fallback.WhenResult(func(int, error) bool { return true })))
		troupetest.BadOption(t, err, "fallback", "WhenResult")
		_, err = fallback.New(sys, empty, stale, fallback.WhenResult[string](nil))
		assert.ErrorIs(t, err, troupe.ErrBadConfig)
	})
}

// failsafe-go's TestFallback "should fallback with failure conditions",
// as a behaviour check: a fallback that handles the result 500 (its
// HandleResult) leaves a 400 alone and answers a 500 with its own value.
//
// spec: PP3
func TestFailsafesFallbackWithFailureConditions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		echo := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
		zero := func(context.Context, int, error) (int, error) { return 0, nil }
		fb, err := fallback.New(troupetest.NewSystem(t), echo, zero,
			fallback.WhenResult(func(res int, _ error) bool { return res == 500 }))
		require.NoError(t, err)
		out, err := troupe.Do(context.Background(), fb, 400)
		require.NoError(t, err)
		assert.Equal(t, 400, out, "not handled")
		out, err = troupe.Do(context.Background(), fb, 500)
		require.NoError(t, err)
		assert.Equal(t, 0, out, "handled")
	})
}
