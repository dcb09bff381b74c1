package migrating_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/troupetest"
)

var errNotFound = errors.New("not found")

var changes atomic.Int64

func logChange(string, breaker.State, breaker.State) { changes.Add(1) }

func TestMain(m *testing.M) { troupetest.Main(m) }

// The guide's stacks build and behave as the guide says.
func TestTheGuidesStacksDoWhatItSays(t *testing.T) {
	changes.Store(0)
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		var calls atomic.Int64
		failing := actors.Func(func(context.Context, string) (string, error) {
			calls.Add(1)
			return "", errors.New("down")
		})
		st, err := failsafeStyle(sys, failing)
		require.NoError(t, err)
		out, err := troupe.Do(context.Background(), st, "a")
		require.NoError(t, err)
		assert.Equal(t, "cached", out, "the fallback answers once the 3 attempts failed")
		assert.EqualValues(t, 3, calls.Load())

		notFound := actors.Func(func(context.Context, string) ([]byte, error) { return nil, errNotFound })
		gb, err := gobreakerStyle(sys, notFound)
		require.NoError(t, err)
		for range 10 {
			_, err := troupe.Do(context.Background(), gb, "k")
			require.ErrorIs(t, err, errNotFound, "a not-found is no failure: the breaker stays closed")
		}
		down := actors.Func(func(context.Context, string) ([]byte, error) { return nil, errors.New("down") })
		gb2, err := gobreakerStyle(sys, down)
		require.NoError(t, err)
		for range 6 {
			_, _ = troupe.Do(context.Background(), gb2, "k")
		}
		_, err = troupe.Do(context.Background(), gb2, "k")
		assert.ErrorIs(t, err, breaker.ErrOpen, "open after 6 failures in a row")
		synctest.Wait()
		assert.EqualValues(t, 1, changes.Load())

		echo := actors.Func(func(_ context.Context, s string) (string, error) { return s, nil })
		rl, err := rateStyle(sys, echo)
		require.NoError(t, err)
		start := time.Now()
		for range 15 {
			_, err := troupe.Do(context.Background(), rl, "x")
			require.NoError(t, err)
		}
		assert.Equal(t, time.Second, time.Since(start).Round(100*time.Millisecond), "5 at once, then 10 a second")

		slow := actors.Func(func(ctx context.Context, s string) (string, error) {
			select {
			case <-time.After(time.Second):
				return s, nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
		hs, err := hedgeStyle(sys, slow)
		require.NoError(t, err)
		_, err = troupe.Do(context.Background(), hs, "y")
		require.NoError(t, err)
	})
}

// The retryablehttp-style client retries a 503 as go-retryablehttp would.
func TestTheRetryingHTTPClientRetriesA503(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	sys := troupetest.NewSystem(t)
	client, err := retryablehttpStyle(sys)
	require.NoError(t, err)
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.EqualValues(t, 2, n.Load())
}
