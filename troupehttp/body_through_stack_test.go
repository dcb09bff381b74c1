package troupehttp_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// bigBody is a loopback server whose every response is size bytes of a
// fixed pattern, written in pieces with flushes between them (so the body
// is far larger than what net/http buffers when the headers arrive). It
// counts the connections it accepted.
type bigBody struct {
	*httptest.Server
	body  []byte
	conns atomic.Int64
}

func newBigBody(t *testing.T, size int) *bigBody {
	t.Helper()
	b := &bigBody{body: bytes.Repeat([]byte("0123456789abcdef"), size/16)}
	b.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fl := w.(http.Flusher)
		for off := 0; off < len(b.body); off += 64 << 10 {
			_, _ = w.Write(b.body[off:min(off+64<<10, len(b.body))])
			fl.Flush()
		}
	}))
	countConns(b.Server, &b.conns)
	b.Start()
	t.Cleanup(b.Close)
	return b
}

// The stacks a response body must cross intact: every built-in stage over
// the Client leaf, alone and the usual four together.
func bodyStacks() map[string]stages.Builder[req, res] {
	s := stages.Stack[req, res]
	return map[string]stages.Builder[req, res]{
		"timeout":   s().Timeout(10 * time.Second),
		"limit":     s().Limit(4),
		"retry":     s().Layer(troupehttp.Retry(3, nil)),
		"ratelimit": s().RateLimit(ratelimit.Rate{Num: 1000, Per: time.Second}),
		"buffer":    s().Buffer(4),
		"loadshed":  s().LoadShed(loadshed.Capacity(4)),
		"filter":    s().Filter(func(r req) (req, error) { return r, nil }),
		"async":     s().AsyncFilter(func(_ context.Context, r req) (req, error) { return r, nil }),
		"spawn":     s().SpawnReady(),
		"breaker":   s().Breaker(breaker.MinCalls(1)),
		"hedge":     s().Hedge(hedge.Delay(time.Hour)),
		"adaptive":  s().Adaptive(),
		"fallback": s().Fallback(func(context.Context, req, error) (res, error) {
			return nil, errors.New("no fallback")
		}),
		"stack": s().Limit(4).Timeout(10 * time.Second).Layer(troupehttp.Retry(3, nil)).
			RateLimit(ratelimit.Rate{Num: 1000, Per: time.Second}),
	}
}

// A response body of 2 MB, read after the call has returned, arrives whole
// through every stage, and its connection goes back to the pool: ten
// calls in a row use one connection.
//
// spec: EG13
func TestALargeBodyReadAfterTheCallArrivesWholeThroughEveryStage(t *testing.T) {
	for name, b := range bodyStacks() {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			srv := newBigBody(t, 2<<20)
			hc, cnt := newClient(t)
			sys := troupetest.NewSystem(t)
			st, err := b.Build(sys, troupehttp.Client(hc))
			require.NoError(t, err)
			closeStack(t, st)
			want := sha256.Sum256(srv.body)
			for i := range 10 {
				r, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
				require.NoError(t, err)
				resp, err := troupe.Do(ctx, st, r)
				require.NoError(t, err)
				h := sha256.New()
				n, err := io.Copy(h, resp.Body)
				require.NoError(t, err, "call %d: after %d bytes", i, n)
				require.NoError(t, resp.Body.Close())
				require.Equal(t, want[:], h.Sum(nil), "call %d: %d bytes", i, n)
			}
			assert.EqualValues(t, 1, srv.conns.Load(), "every body read to its end leaves its connection in the pool")
			assert.EqualValues(t, 10, cnt.closed.Load())
		})
	}
}

// The body stays bounded by the caller's own context: cancelling it
// mid-body ends the read with the context's error.
//
// spec: EG13
func TestABodyReadAfterTheCallEndsWithTheCallersContext(t *testing.T) {
	srv := newBigBody(t, 8<<20)
	hc, _ := newClient(t)
	sys := troupetest.NewSystem(t)
	st, err := stages.Stack[req, res]().Limit(4).Timeout(10*time.Second).Build(sys, troupehttp.Client(hc))
	require.NoError(t, err)
	closeStack(t, st)
	ctx, cancel := context.WithCancel(testCtx(t))
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := troupe.Do(ctx, st, r)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.ReadFull(resp.Body, make([]byte, 1<<20))
	require.NoError(t, err)
	cancel()
	_, err = io.Copy(io.Discard, resp.Body)
	assert.ErrorIs(t, err, context.Canceled)
}
