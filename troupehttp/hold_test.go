package troupehttp_test

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/troupehttp"
)

// streaming is a backend whose responses stream until released: each
// handler sends its headers and a first chunk, then waits, and counts
// the handlers streaming at once.
type streaming struct {
	*backend
	release chan struct{}

	mu           sync.Mutex
	active, peak int // guarded by mu
}

func newStreaming(t *testing.T) *streaming {
	s := &streaming{release: make(chan struct{})}
	s.backend = newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.active++
		s.peak = max(s.peak, s.active)
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.active--
			s.mu.Unlock()
		}()
		io.WriteString(w, "first chunk\n")
		w.(http.Flusher).Flush()
		select {
		case <-s.release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "last chunk\n")
	})
	t.Cleanup(s.releaseAll) // before the backend closes: it waits for its handlers
	return s
}

func (s *streaming) releaseAll() {
	select {
	case <-s.release:
	default:
		close(s.release)
	}
}

func (s *streaming) counts() (active, peak int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active, s.peak
}

// stream sends n clients at once through g to s, and once want of them
// stream at the backend while the others wait at stage (its Waiting),
// releases them all; it returns the backend's peak of streaming
// handlers.
func stream(t *testing.T, g *gateway, s *streaming, stage string, n, want int) int {
	t.Helper()
	ctx := testCtx(t)
	user := newUser(t)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			resp, err := user.Get(g.URL)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			errs <- err
		})
	}
	var active int
	var st troupe.Stats
	settled := func() bool {
		active, _ = s.counts()
		st, _ = g.stack.Stats(stage)
		return active == want && active+st.Waiting == n
	}
	if !poll(ctx, settled) {
		s.releaseAll()
		t.Fatalf("never: %d clients streaming and %d waiting (want %d and %d): %+v", active, st.Waiting, want, n-want, st)
	}
	s.releaseAll()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	eventually(t, ctx, "every permit back", func() bool { return used(t, g.stack, stage) == 0 })
	_, peak := s.counts()
	return peak
}

// heldOrNot streams n clients through a gateway over b in front of a
// streaming backend, with HoldUntilBodyClosed (held of them stream at
// once, the others wait at stage) and without (all n stream at once).
func heldOrNot(t *testing.T, b stages.Builder[req, res], stage string, n, held int) {
	t.Run("held until the body is closed", func(t *testing.T) {
		s := newStreaming(t)
		g := newGateway(t, s.URL, b, troupehttp.HoldUntilBodyClosed())
		assert.Equal(t, held, stream(t, g, s, stage, n, held))
	})
	t.Run("by default, until the headers", func(t *testing.T) {
		s := newStreaming(t)
		g := newGateway(t, s.URL, b)
		assert.Equal(t, n, stream(t, g, s, stage, n, n))
	})
}

// Behind Limit(16), 64 clients of a streaming backend: with
// HoldUntilBodyClosed, a response holds its permit while its body
// streams, and the backend never has more than 16 streaming handlers; by
// default (tower's), the permit goes back with the headers, and all 64
// stream at once.
//
// spec: HT5
func TestALimitCountsStreamingResponsesWhenTheyHoldTheirStages(t *testing.T) {
	heldOrNot(t, stages.Stack[req, res]().Limit(16).Layer(troupehttp.Retry(3, nil)), "limit", 64, 16)
}

// An adaptive limit's permits are held the same way (its limit fixed at 8
// here, so that the count is exact): 8 streaming handlers, where the
// default lets all 64 stream.
//
// spec: HT5
func TestAnAdaptiveLimitCountsStreamingResponsesWhenTheyHoldTheirStages(t *testing.T) {
	heldOrNot(t, stages.Stack[req, res]().Adaptive(adaptive.Limits(8, 8)), "adaptive", 64, 8)
}

// However a held response ends, its permit goes back: its body read to
// the end, closed early, failing as its backend drops the connection, its
// caller cancelling mid-body, an error (a timeout), no body at all (a
// HEAD), a held body (a 503); an upgraded connection holds it until it is
// closed; and the attempts a retry drops never keep one (a Limit(1)
// inside a retry would otherwise wait for itself).
//
// spec: HT5
func TestAHeldResponseGivesItsPermitBackHoweverItEnds(t *testing.T) {
	be := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/drop":
			w.Header().Set("Content-Length", "100000")
			io.WriteString(w, "part")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		case "/slow":
			<-r.Context().Done()
		case "/503":
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case "/upgrade":
			upgrade(w, r)
		default:
			_, _ = w.Write(pattern(256 << 10))
		}
	})
	flaky := newScripted(t, 503, 503, 200)
	b := stages.Stack[req, res]().Limit(1).Named("outer").Timeout(100 * time.Millisecond).
		Layer(troupehttp.Retry(3, nil)).Limit(1).Named("inner")
	g := newGateway(t, be.URL, b, troupehttp.HoldUntilBodyClosed())
	hc := &http.Client{Transport: g.proxy.Transport}
	free := func(what string) {
		t.Helper()
		eventually(t, testCtx(t), what+": both limits free", func() bool {
			return used(t, g.stack, "outer") == 0 && used(t, g.stack, "inner") == 0
		})
	}

	resp, err := hc.Get(be.URL)
	require.NoError(t, err)
	assert.Equal(t, 1, used(t, g.stack, "outer"), "held while the body is open")
	assert.Equal(t, 1, used(t, g.stack, "inner"), "held while the body is open")
	_, _ = io.Copy(io.Discard, resp.Body) // read to its end, not closed
	free("read to its end")
	resp.Body.Close()

	resp, err = hc.Get(be.URL)
	require.NoError(t, err)
	resp.Body.Close()
	free("closed unread")

	resp, err = hc.Get(be.URL + "/drop")
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	assert.Error(t, err)
	free("dropped mid-body")
	resp.Body.Close()

	ctx, cancel := context.WithCancel(testCtx(t))
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, be.URL, nil)
	resp, err = hc.Do(r)
	require.NoError(t, err)
	cancel()
	_, _ = io.ReadAll(resp.Body)
	free("cancelled mid-body")
	resp.Body.Close()

	_, err = hc.Get(be.URL + "/slow")
	assert.Error(t, err, "the timeout fires")
	free("a timeout")

	resp, err = hc.Head(be.URL)
	require.NoError(t, err)
	free("a HEAD")
	resp.Body.Close()

	resp, err = hc.Get(be.URL + "/503")
	require.NoError(t, err)
	free("a held 503")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	resp.Body.Close()

	resp, err = hc.Get(flaky.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "two retries through Limit(1)")
	readBody(t, resp)
	free("retried")

	dialUpgrade(t, g.URL+"/upgrade") // closes the upgraded connection when done
	free("an upgraded connection closed")
}
