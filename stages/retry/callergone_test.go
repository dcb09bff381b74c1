package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// Regression: a Timeout above Retry answered the caller, and Retry went on
// sending attempts whose downstream call was handed to a caller who had
// returned: nobody ran them, the session never ended, and Close hung.
//
// spec: T4, CORE6, ACT5
func TestT4_RetryStopsOnceTheOutcomeWasDeliveredAbove(t *testing.T) {
	for _, wait := range []time.Duration{0, time.Millisecond} {
		synctest.Test(t, func(t *testing.T) {
			sys := troupetest.NewSystem(t)
			fn := actors.Func(func(ctx context.Context, _ int) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
			r, err := retry.New(sys, fn, retry.Attempts[int, int]{Max: 1000, Backoff: fixed(wait), Retryable: func(int, error) bool { return true }})
			require.NoError(t, err)
			st, err := troupe.NewBuilder[int, int]().Layer(timeout.Layer[int, int](20*time.Millisecond)).Build(sys, r)
			require.NoError(t, err)
			_, err = troupe.Do(context.Background(), st, 1)
			assert.ErrorIs(t, err, timeout.ErrTimeout)
			synctest.Wait()
			assert.Equal(t, retry.Sessions{}, r.Sessions(), "the session ended with its outcome delivered")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			assert.NoError(t, st.Close(ctx), "and the stack drains")
		})
	}
}

type fixed time.Duration

func (f fixed) Delay(int) time.Duration { return time.Duration(f) }

// gatePolicy retries every failure once its gate opens.
type gatePolicy struct{ gate <-chan struct{} }

func (p *gatePolicy) Retry(_ *int, _ *int, err *error) (retry.Wait, bool) {
	return retry.Until(p.gate), *err != nil
}
func (p *gatePolicy) CloneRequest(req *int) (int, bool) { return *req, true }

// Regression: a caller whose context ended just as its session's wait
// ended got retry.ErrSessionOver (meant for nobody) about once in 700,
// instead of its context's error.
//
// spec: HR3, RT10, CORE6
func TestHR3_ACallerWhoseContextEndsAsItsRetryWaitEndsGetsItsContextsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		for range 3000 {
			failed := make(chan struct{}, 1)
			fn := actors.Func(func(context.Context, int) (int, error) {
				select {
				case failed <- struct{}{}:
				default: // a later attempt
				}
				return 0, errors.New("503")
			})
			gate := make(chan struct{})
			r, err := retry.New(sys, fn, gatePolicy{gate: gate})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { _, err := troupe.Do(ctx, r, 1); done <- err }()
			<-failed
			synctest.Wait() // the session waits for its gate
			close(gate)
			cancel()
			// Its context's error, or the outcome of an attempt that ran
			// before the caller saw its context end; never ErrSessionOver
			// (about 1 in 700 before the fix: 3,000 rounds catch it).
			err = <-done
			require.NotErrorIs(t, err, retry.ErrSessionOver)
			if !errors.Is(err, context.Canceled) {
				require.EqualError(t, err, "503")
			}
			require.NoError(t, r.Close(context.Background()))
		}
	})
}

// Regression: a Close whose context ended answered the session of a caller
// that was running its attempt's downstream call, and so counted that caller
// as answered: the call's context was never cancelled, and the caller,
// busy in it, did not return until the downstream did (here: never).
//
// spec: HR2, HR3
func TestHR2_CloseAbandonsTheAttemptACallerRunsAfterAnsweringItsSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		running := make(chan struct{})
		fn := actors.Func(func(ctx context.Context, _ int) (int, error) { close(running); <-ctx.Done(); return 0, ctx.Err() })
		r, err := retry.New(sys, fn, retry.Attempts[int, int]{Max: 3})
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { _, err := troupe.Do(context.Background(), r, 1); done <- err }()
		<-running
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		err = r.Close(ctx)
		// The running call is abandoned: its work is told to stop, by the
		// stage's abandon or by the outcome its session got; Close says
		// so when the caller had not returned yet when it counted.
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		var ab *troupe.AbandonedError
		if errors.As(err, &ab) {
			assert.EqualValues(t, 1, ab.Calls)
		}
		synctest.Wait()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, troupe.ErrClosed)
		default:
			t.Fatal("the caller is still in its downstream call after Close returned")
		}
	})
}

// Regression: a Retry closed on its own (its Close's context over) while
// its attempt ran on the caller's goroutine answered the session; the
// Timeout above it let go of the context it had given the attempt, and
// nothing cancelled that work any more: the caller, busy in it, had its
// outcome but could not return, even once its own context ended. Now the
// work is told to stop when the outcome comes.
//
// spec: HR2, HR3, CORE6
func TestHR3_ACallerWhoseOutcomeCameWhileItRanTheDownstreamReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		running, release := make(chan struct{}), make(chan struct{})
		fn := actors.Func(func(ctx context.Context, _ int) (int, error) {
			close(running)
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-release: // the test's way out, should the context never end
				return 0, errors.New("released by the test")
			}
		})
		r, err := retry.New(sys, fn, retry.Attempts[int, int]{Max: 3})
		require.NoError(t, err)
		st, err := troupe.NewBuilder[int, int]().Layer(timeout.Layer[int, int](time.Hour)).Build(sys, r)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { _, err := troupe.Do(ctx, st, 1); done <- err }()
		<-running

		expired, stop := context.WithTimeout(context.Background(), 0)
		defer stop()
		_ = r.Close(expired) // the Retry alone: its session ends with ErrClosed
		cancel()
		synctest.Wait()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, troupe.ErrClosed)
		default:
			close(release)
			<-done
			t.Fatal("the caller stayed in its downstream call after its outcome came and its context ended")
		}
		require.NoError(t, st.Close(context.Background()))
	})
}
