package stagekit_test

import (
	"context"
	"reflect"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/troupetest"
)

// panicky is a plain troupe.Service whose Reserve panics.
type panicky struct{}

func (panicky) Reserve(context.Context) (*troupe.Permit[int, int], error) { panic("reserve exploded") }

// spec: HR1
func TestHR1_PlainServiceWhoseReservePanicsIsAnOutcomeNotACrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		s := stage(t, sys, panicky{}, 4)
		r := <-troupetest.Go(context.Background(), s, 1)
		assert.ErrorIs(t, r.Err, troupe.ErrPanic)
		var pe *troupe.PanicError
		require.ErrorAs(t, r.Err, &pe)
		assert.Equal(t, "reserve exploded", pe.Value)
		assert.Contains(t, pe.Where, "Reserve")
		assert.NotEmpty(t, pe.Stack)
		require.NoError(t, s.Close(context.Background()), "the stage can still be closed")
	})
}

// spec: HR4
func TestHR4_NilSystemIsAnErrorAtBuild(t *testing.T) {
	var sys *stagekit.System
	api := stagekit.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	_, err := troupe.NewBuilder[int, int]().Layer(passLayer()).Build(sys, api)
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
	var h *stagekit.Host
	_, err = troupe.NewBuilder[int, int]().Layer(passLayer()).Build(h, api)
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
}

// spec: HR4
func TestHR4_NilFunctionIsAnErrorAtBuild(t *testing.T) {
	sys := troupetest.NewSystem(t)
	api := stagekit.Func[int, int](nil)
	_, err := troupe.NewBuilder[int, int]().Build(sys, api)
	assert.ErrorIs(t, err, troupe.ErrBadConfig, "no layers")
	assert.ErrorIs(t, err, stagekit.ErrNilFunc)
	_, err = troupe.NewBuilder[int, int]().Layer(passLayer()).Build(sys, api)
	assert.ErrorIs(t, err, troupe.ErrBadConfig, "under a stage")
	_, err = api.Reserve(context.Background())
	assert.ErrorIs(t, err, stagekit.ErrNilFunc)
}

// spec: HR4
func TestHR4_CapacitiesAreCheckedNeverTruncated(t *testing.T) {
	sys := troupetest.NewSystem(t)
	api := stagekit.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	for _, n := range []int{-1, 1 << 31, 1<<32 + 5} {
		_, err := stagekit.Spawn(sys, stagekit.Config{Capacity: n}, api, stagekit.Passthrough[int, int]{})
		assert.ErrorIs(t, err, troupe.ErrBadConfig, "capacity %d", n)
	}
	for n, want := range map[int]int{0: stagekit.MaxCapacity, 1: 1, stagekit.MaxCapacity: stagekit.MaxCapacity} {
		s, err := stagekit.Spawn(sys, stagekit.Config{Capacity: n}, api, stagekit.Passthrough[int, int]{})
		require.NoError(t, err)
		assert.Equal(t, want, stagekit.MailboxOf(s).Stats().Capacity, "capacity %d", n)
	}
}

// spec: HR10
func TestHR10_NoLeafTypeHasAPermitFreeCall(t *testing.T) {
	api := stagekit.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	for _, v := range []any{api, &stagekit.Stage[int, int]{}} {
		typ := reflect.TypeOf(v)
		for _, m := range []string{"Call", "Send", "TryReserve", "Unreserve", "ReserveAsync"} {
			_, ok := typ.MethodByName(m)
			assert.False(t, ok, "%v has an exported %s", typ, m)
		}
	}
}

type ctxKey struct{}

// valueService records the value its Reserve's context carries.
type valueService struct {
	seen    chan any
	permits troupe.PermitSource[int, int]
}

func (s *valueService) Reserve(ctx context.Context) (*troupe.Permit[int, int], error) {
	s.seen <- ctx.Value(ctxKey{})
	return s.permits.Issue(s), nil
}
func (s *valueService) Call(context.Context, int) (int, error) { return 0, nil }
func (s *valueService) Release()                               {}

// spec: HR1
func TestCallersContextValuesReachAnAdaptedServicesReserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		svc := &valueService{seen: make(chan any, 1)}
		s := stage(t, sys, svc, 4)
		ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "req-42"))
		defer cancel()
		r := <-troupetest.Go(ctx, s, 1)
		require.NoError(t, r.Err)
		assert.Equal(t, "req-42", <-svc.seen)
	})
}

func passLayer() troupe.Layer[int, int] {
	return troupe.LayerFunc[int, int](func(h troupe.Host, inner troupe.Service[int, int]) (troupe.Service[int, int], error) {
		return stagekit.Spawn(h, stagekit.Config{Name: "pass"}, inner, stagekit.Passthrough[int, int]{})
	})
}

// panickyStrategy is a supervisor strategy whose Decide panics.
type panickyStrategy struct{}

func (panickyStrategy) Decide(stagekit.Failure) stagekit.Decision {
	panic("strategy exploded")
}

// spec: HR1
func TestHR1_PanickingStrategyStopsTheStageInsteadOfCrashing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		host, err := sys.ActorsHost().System().NewHost("bad-strategy", panickyStrategy{})
		require.NoError(t, err)
		mock, h := troupetest.NewMock[int, int]()
		s := stage(t, host, mock, 4)
		h.PanicOnReady("stage exploded")
		r := <-troupetest.Go(context.Background(), s, 1)
		assert.ErrorIs(t, r.Err, troupe.ErrPanic)
		synctest.Wait()
		_, err = s.Reserve(context.Background())
		assert.ErrorIs(t, err, troupe.ErrClosed, "the stage was stopped")
		require.NoError(t, s.Close(context.Background()))
	})
}
