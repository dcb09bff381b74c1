package breaker_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/troupetest"
)

// step is a request to the fake service: how long the call takes, and how
// it ends.
type step struct {
	took time.Duration
	res  int
	err  error
}

var (
	errDown = errors.New("service down")
	ok      = step{}
	fail    = step{err: errDown}
)

// slowly is s, taking d.
func slowly(d time.Duration, s step) step { s.took = d; return s }

// fake is the service inside the breaker: it runs each step, honouring
// its context, and counts the calls that reach it.
type fake struct{ calls atomic.Int64 }

func (f *fake) service() *actors.FuncService[step, int] {
	return actors.Func(func(ctx context.Context, s step) (int, error) {
		f.calls.Add(1)
		if s.took > 0 {
			select {
			case <-time.After(s.took):
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		return s.res, s.err
	})
}

// overFake spawns a breaker over a new fake service.
func overFake(t *testing.T, opts ...breaker.Option[int]) (*breaker.Breaker[step, int], *fake) {
	t.Helper()
	f := &fake{}
	br, err := breaker.New[step, int](troupetest.NewSystem(t), f.service(), opts...)
	require.NoError(t, err)
	return br, f
}

// overMock spawns a breaker over a mock service that allows 100
// reservations.
func overMock(t *testing.T, opts ...breaker.Option[int]) (*breaker.Breaker[int, int], *troupetest.Handle[int, int]) {
	t.Helper()
	mock, h := troupetest.NewMock[int, int]()
	h.Allow(100)
	br, err := breaker.New[int, int](troupetest.NewSystem(t), mock, opts...)
	require.NoError(t, err)
	return br, h
}

// run makes one call of each step, in turn, and returns the last error.
func run(svc troupe.Service[step, int], steps ...step) error {
	var err error
	for _, s := range steps {
		_, err = troupe.Do(context.Background(), svc, s)
	}
	return err
}

// at sleeps until d after start: the test drives the bubble's clock.
func at(start time.Time, d time.Duration) { time.Sleep(time.Until(start.Add(d))) }

// change is one change of state seen by OnStateChange, and when, since
// the recorder was made.
type change struct {
	From, To breaker.State
	At       time.Duration
}

// recorder records the changes of state OnStateChange reports.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	seen  []change // guarded by mu
}

func newRecorder() *recorder { return &recorder{start: time.Now()} }

func (r *recorder) record(from, to breaker.State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, change{from, to, time.Since(r.start)})
}

func (r *recorder) option() breaker.Setting { return breaker.OnStateChange(r.record) }

func (r *recorder) changes() []change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]change(nil), r.seen...)
}

// openErr returns err as an *OpenError, failing the test if it is not one.
func openErr(t *testing.T, err error) *breaker.OpenError {
	t.Helper()
	require.ErrorIs(t, err, breaker.ErrOpen)
	var oe *breaker.OpenError
	require.ErrorAs(t, err, &oe)
	return oe
}

const (
	closed   = breaker.Closed
	open     = breaker.Open
	halfOpen = breaker.HalfOpen
)
