package balance

import (
	"context"
	"testing"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/supervisor"
	"github.com/troupe-go/troupe/troupetest"
)

// A FuncService is always ready, and so is what reserves on one as it is:
// a stack with no stages over it, a supervised pipeline of such a stack.
// A stack with a stage is ready only when its stage is.
//
// spec: BAL1
func TestWhatReservesOnAFuncAsItIsIsAlwaysReady(t *testing.T) {
	sys := troupetest.NewSystem(t)
	fn := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	bare, err := stages.Stack[int, int]().Build(sys, fn)
	if err != nil {
		t.Fatal(err)
	}
	limited, err := stages.Stack[int, int]().Limit(1).Build(sys, fn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = limited.Close(context.Background()) })
	pipe, err := supervisor.New(sys, "bare", func(h troupe.Host) (troupe.Service[int, int], error) {
		return stages.Stack[int, int]().Build(h, fn)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pipe.Close(context.Background()) })
	for name, c := range map[string]struct {
		svc  troupe.Service[int, int]
		want bool
	}{
		"func": {fn, true}, "stack with no stages": {bare, true}, "pipeline of that stack": {pipe, true},
		"stack with a limit": {limited, false}, "mock": {func() troupe.Service[int, int] { m, _ := troupetest.NewMock[int, int](); return m }(), false},
	} {
		if got := alwaysReady(c.svc); got != c.want {
			t.Errorf("%s: alwaysReady = %v, want %v", name, got, c.want)
		}
	}
}
