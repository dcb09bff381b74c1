// Package testsys gives tests an actor system that is shut down when the
// test ends and that fails the test on any dead letter: a message troupe
// sent to an actor that was already gone is a lifecycle bug.
package testsys

import (
	"context"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe/actors"
)

// New returns a system for t.
func New(t testing.TB, opts ...actors.Option) *actors.System {
	t.Helper()
	sys := actors.NewSystem(opts...)
	sub := sys.ActorSystem().EventStream.Subscribe(func(m any) {
		if d, ok := m.(*actor.DeadLetterEvent); ok {
			t.Errorf("dead letter: %T to %v", d.Message, d.PID)
		}
	})
	t.Cleanup(func() {
		if err := sys.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		sys.ActorSystem().EventStream.Unsubscribe(sub)
	})
	return sys
}
