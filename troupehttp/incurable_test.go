package troupehttp_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
)

// roundTrip is an http.RoundTripper made of a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// spec: EG10, EG12
func TestRetryPolicyRetriesNeitherAPanicNorAPermanentError(t *testing.T) {
	refused := errors.New("certificate signed by unknown authority")
	for name, c := range map[string]struct {
		rt   roundTrip
		want error
	}{
		"panic":     {func(*http.Request) (*http.Response, error) { panic("transport bug") }, troupe.ErrPanic},
		"permanent": {func(*http.Request) (*http.Response, error) { return nil, troupe.Permanent(refused) }, refused},
	} {
		t.Run(name, func(t *testing.T) {
			var n atomic.Int64
			hc := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
				n.Add(1)
				return c.rt(r)
			})}
			st := retryStack(t, hc, 3)
			r, err := http.NewRequest(http.MethodGet, "http://example.test/", nil)
			require.NoError(t, err)
			_, err = troupe.Do(testCtx(t), st, r)
			assert.ErrorIs(t, err, c.want)
			assert.EqualValues(t, 1, n.Load(), "one attempt: no retry can cure it")
		})
	}
}
