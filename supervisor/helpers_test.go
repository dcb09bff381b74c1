package supervisor_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/rt"
	"github.com/troupe-go/troupe/supervisor"
)

// probe is an actor in a pipeline's host that fails when told to and
// reports when it (re)starts: the gaps between its failures and its
// restarts are the delays the pipeline's strategy decided.
type probe struct {
	as      *actor.ActorSystem
	host    *stagekit.Host
	pid     *actor.PID
	starts  chan time.Time // one per start, restarts included
	stopped chan struct{}  // closed once it stopped
	once    sync.Once
}

// fail is the message that makes a probe panic with reason.
type fail struct{ reason any }

func (p *probe) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		p.starts <- time.Now()
	case fail:
		panic(m.reason)
	case *actor.Stopped:
		p.host.Forget(p)
		close(p.stopped)
	}
}

// Close stops the probe (its host closes it).
func (p *probe) Close(context.Context) error {
	select {
	case <-p.stopped:
	default:
		p.once.Do(func() { p.as.Root.Stop(p.pid) })
		<-p.stopped
	}
	return nil
}

// failAndTime makes p fail with reason and returns how long its restart
// took.
func (p *probe) failAndTime(reason any) time.Duration {
	start := time.Now()
	p.as.Root.Send(p.pid, fail{reason})
	return (<-p.starts).Sub(start)
}

// probed starts a pipeline in sys whose host holds a probe, with opts.
func probed(t *testing.T, sys *actors.System, opts ...supervisor.Option) (*supervisor.Pipeline[int, int], *probe) {
	t.Helper()
	p := &probe{as: rt.ActorSystem((*stagekit.System)(sys)), starts: make(chan time.Time, 1), stopped: make(chan struct{})}
	pl, err := supervisor.New(sys, "probed", func(h troupe.Host) (troupe.Service[int, int], error) {
		host, err := stagekit.HostFrom(h)
		if err != nil {
			return nil, err
		}
		p.host = host
		props := actor.PropsFromProducer(func() actor.Actor { return p })
		if p.pid, err = rt.SpawnActor(host, props, "probe", p); err != nil {
			return nil, err
		}
		return actors.Func(func(_ context.Context, v int) (int, error) { return v, nil }), nil
	}, opts...)
	require.NoError(t, err)
	<-p.starts
	return pl, p
}

// streak is a failure reason that is a supervisor.Streak.
type streak int

func (s streak) Error() string { return fmt.Sprintf("failure %d in a row", int(s)) }
func (s streak) Streak() int   { return int(s) }

var _ supervisor.Streak = streak(1)

// failures is a stage's failure history, for testing a Strategy's Decide.
type failures struct{ times []time.Time }

// Fail records a failure now.
func (f *failures) Fail() { f.times = append(f.times, time.Now()) }

// Of returns the latest failure, with reason.
func (f *failures) Of(reason any) actors.Failure {
	return actors.NewFailure("stage", reason, f.times...)
}
