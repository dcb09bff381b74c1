package reconnect_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/troupetest"
)

// events records what an observer is told, rendered.
type events struct {
	mu  sync.Mutex
	seq []string
}

func (e *events) Observe(ev troupe.Event) {
	s := ev.Type.String()
	switch ev.Type {
	case troupe.EventStateChanged:
		s = "state:" + ev.From + ">" + ev.To
	case troupe.EventRejected:
		s += ":" + ev.Reason.String()
	case troupe.EventFinished:
		s += ":" + ev.Outcome.String()
	}
	e.mu.Lock()
	e.seq = append(e.seq, fmt.Sprintf("%s %s", ev.Stage, s))
	e.mu.Unlock()
}

func (e *events) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.seq...)
}

// spec: OB1
func TestOB1_ReconnectReportsStateChangesAndRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen events
		sys := troupetest.NewSystem(t, actors.WithObserver(&seen, "peer"))
		d := newDialer()
		p, _ := pipelineIn(t, sys, d, exact(t, time.Second, time.Hour, 2), 10)
		ctx := context.Background()
		refused := errors.New("connection refused")
		d.outcomes <- outcome{err: refused}
		r := <-troupetest.Go[int, int](ctx, p, 1)
		assert.ErrorIs(t, r.Err, reconnect.ErrConnect)
		synctest.Wait()
		time.Sleep(time.Second) // the connection actor's backoff
		synctest.Wait()

		svc, h := connection()
		h.Allow(1)
		d.outcomes <- outcome{svc: svc}
		fut := troupetest.Go[int, int](ctx, p, 2)
		h.Next(ctx).Respond(20)
		require.NoError(t, (<-fut).Err)
		synctest.Wait()
		assert.Equal(t, []string{
			"reconnect accepted", "reconnect state:Idle>Connecting",
			"reconnect state:Connecting>Idle", "reconnect rejected:other", "reconnect finished:failure",
			"reconnect restarted",
			"reconnect accepted", "reconnect state:Idle>Connecting", "reconnect state:Connecting>Connected",
			"reconnect started", "reconnect finished:success",
		}, seen.get())
	})
}

// spec: OB1, API5 — a reconnect built by a stack's layer reports to the
// stack's observer, under the name the stack gives it.
func TestOB1_AReconnectBuiltInAStackReportsToItsObserver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen events
		sys := troupetest.NewSystem(t)
		d := newDialer()
		connect := troupe.LayerFunc[int, int](func(h troupe.Host, _ troupe.Service[int, int]) (troupe.Service[int, int], error) {
			return reconnect.New(h, reconnect.Dialer(d.dial), "peer") // the layer dials its own connections
		})
		unused, _ := troupetest.NewMock[int, int]()
		st, err := troupe.NewBuilder[int, int]().Observe(&seen, "peer").
			Layer(troupe.Named("link", connect)).
			Build(sys, unused)
		require.NoError(t, err)
		svc, h := connection()
		h.Allow(1)
		d.outcomes <- outcome{svc: svc}
		ctx := context.Background()
		fut := troupetest.Go[int, int](ctx, st, 1)
		h.Next(ctx).Respond(10)
		require.NoError(t, (<-fut).Err)
		synctest.Wait()
		assert.Equal(t, []string{
			"link accepted", "link state:Idle>Connecting", "link state:Connecting>Connected",
			"link started", "link finished:success",
		}, seen.get())
		require.NoError(t, st.Close(ctx))
	})
}
