package troupe_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/troupetest"
)

// newSystem returns an actor system shut down when the test ends.
func newSystem(t testing.TB) *actors.System { return troupetest.NewSystem(t) }

// counter is a leaf that counts its calls and echoes its request.
type counter struct{ calls atomic.Int64 }

func (c *counter) fn(_ context.Context, v int) (int, error) {
	c.calls.Add(1)
	return v, nil
}

// newBuffer spawns a buffer of capacity n over a counting function.
func newBuffer(t testing.TB, sys *actors.System, n int) (*buffer.Buffer[int, int], *counter) {
	t.Helper()
	c := &counter{}
	b, err := buffer.New[int, int](sys, actors.Func(c.fn), n)
	if err != nil {
		t.Fatal(err)
	}
	return b, c
}

var _ troupe.Service[int, int] = (*buffer.Buffer[int, int])(nil)
