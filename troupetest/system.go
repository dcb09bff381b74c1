// Systems for tests: see NewSystem.
package troupetest

import (
	"context"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/rt"
)

// NewSystem returns an actor system for t, shut down when the test ends;
// the test fails on any dead letter (a message troupe sent to an actor
// already gone: a lifecycle bug) and if the shutdown fails.
func NewSystem(t testing.TB, opts ...actors.Option) *actors.System {
	t.Helper()
	sys := actors.NewSystem(opts...)
	sub := rt.ActorSystem((*stagekit.System)(sys)).EventStream.Subscribe(func(m any) {
		if d, ok := m.(*actor.DeadLetterEvent); ok {
			t.Errorf("dead letter: %T to %v", d.Message, d.PID)
		}
	})
	t.Cleanup(func() {
		if err := sys.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		rt.ActorSystem((*stagekit.System)(sys)).EventStream.Unsubscribe(sub)
	})
	return sys
}
