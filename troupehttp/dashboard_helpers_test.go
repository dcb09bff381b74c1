package troupehttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// frame is a dashboard event as the page reads it.
type frame struct {
	IntervalMs float64 `json:"intervalMs"`
	Stacks     []struct {
		Name     string       `json:"name"`
		Observed bool         `json:"observed"`
		Stages   []stageFrame `json:"stages"`
	} `json:"stacks"`
}

type stageFrame struct {
	Name                                     string
	Capacity, InFlight, Queued, Waiting      int
	Accepted, Rejected, Failed, Retries, P50 *float64
	P99, Hedges                              *float64
	Breaker, RateLimit, Endpoint             string
	Picks, Errors, RTTMs                     *float64
	Unbounded                                bool
	Limit                                    *int
	SeriesInFlight                           []int
	SeriesAccepted                           []float64
}

// stage returns the stage named name of the stack named stack.
func (f frame) stage(t *testing.T, stack, name string) stageFrame {
	t.Helper()
	for _, s := range f.Stacks {
		for _, st := range s.Stages {
			if s.Name == stack && st.Name == name {
				return st
			}
		}
	}
	t.Fatalf("no stage %q of stack %q in %+v", name, stack, f)
	return stageFrame{}
}

// sseRecorder is a ResponseWriter that hands each event flushed to it to
// the test, without a network, so that a stream can run in a synctest
// bubble.
type sseRecorder struct {
	header http.Header
	code   int
	buf    bytes.Buffer
	events chan []byte
}

func newSSERecorder() *sseRecorder {
	return &sseRecorder{header: http.Header{}, events: make(chan []byte, 64)}
}

func (r *sseRecorder) Header() http.Header { return r.header }
func (r *sseRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}
func (r *sseRecorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.buf.Write(p)
}

// Flush hands over each complete "data: ..." event written so far.
func (r *sseRecorder) Flush() {
	for {
		ev, _, ok := bytes.Cut(r.buf.Bytes(), []byte("\n\n"))
		if !ok {
			return
		}
		r.events <- bytes.Clone(bytes.TrimPrefix(ev, []byte("data: ")))
		r.buf.Next(len(ev) + 2)
	}
}

// next waits for the next event and decodes it; its raw JSON too.
func (r *sseRecorder) next(t *testing.T) (frame, []byte) {
	t.Helper()
	raw := <-r.events
	var f frame
	require.NoError(t, json.Unmarshal(raw, &f), "event %s", raw)
	return f, raw
}

// openStream serves /events to rec until the returned cancel; done is closed
// when the handler has returned.
func openStream(d *troupehttp.Dashboard, rec *sseRecorder) (cancel context.CancelFunc, done chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() {
		defer close(done)
		d.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/events", nil))
	}()
	return cancel, done
}

var errDown = errors.New("downstream failed")

// dashBackend is an inner service that takes lat to answer, and fails while
// failing is set; a call with a request of 1 first waits for gate.
type dashBackend struct {
	lat     time.Duration
	failing atomic.Bool
	gate    chan struct{}
}

func (b *dashBackend) call(ctx context.Context, r int) (int, error) {
	if r == 1 {
		select {
		case <-b.gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	time.Sleep(b.lat)
	if b.failing.Load() {
		return 0, errDown
	}
	return r, nil
}

// observedStack builds limit(8) -> breaker (open after 3 failures in a
// row, for an hour) over b, observed by d as pipeline name, registered.
func observedStack(t *testing.T, d *troupehttp.Dashboard, name string, b *dashBackend) *troupe.Stack[int, int] {
	t.Helper()
	st, err := stages.Stack[int, int]().Observe(d.Observer(), name).
		Limit(8).
		Breaker(breaker.ConsecutiveFailures(3), breaker.OpenDelay(time.Hour)).
		Build(troupetest.NewSystem(t), actorsFunc(b))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close(context.Background())) })
	require.NoError(t, d.Register(name, st))
	return st
}

// actorsFunc is b as a leaf service.
func actorsFunc(b *dashBackend) *actors.FuncService[int, int] { return actors.Func(b.call) }
