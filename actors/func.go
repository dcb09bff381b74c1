package actors

import (
	"context"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// FuncService is the innermost service made from a plain function (see
// [Func]). It is always ready: limits belong to the stages above it. Its
// function runs on the goroutine of the caller that made the request, never
// on an actor, so it may block; it should honour its context, since a
// Timeout above it can only be as prompt as the function's response to
// cancellation. A panic in the function becomes a *troupe.PanicError
// outcome. Like every service, it can only be called through a permit.
//
// Safe for concurrent use; it has no state but its permits.
type FuncService[Req, Res any] stagekit.FuncService[Req, Res]

func (f *FuncService[Req, Res]) kit() *stagekit.FuncService[Req, Res] {
	return (*stagekit.FuncService[Req, Res])(f)
}

// Func returns the service that calls fn on the goroutine of the caller that
// made the request (it may block; it should honour its context). name,
// when given, names it in errors. A panic in fn is an outcome
// (troupe.ErrPanic); a nil fn is an error from Build (ErrNilFunc).
func Func[Req, Res any](fn func(context.Context, Req) (Res, error), name ...string) *FuncService[Req, Res] {
	return (*FuncService[Req, Res])(stagekit.Func(fn, name...))
}

// Reserve returns a permit at once, unless ctx is already done.
func (f *FuncService[Req, Res]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	return f.kit().Reserve(ctx)
}

// Validate reports a FuncService made from a nil function (ErrNilFunc):
// Build and every stage spawned over it refuse it.
func (f *FuncService[Req, Res]) Validate() error { return f.kit().Validate() }

// Name returns the service's name.
func (f *FuncService[Req, Res]) Name() string { return f.kit().Name() }

// ActorsInner returns the service's non-blocking side, which the stage
// outside it uses (stagekit.InnerSider).
func (f *FuncService[Req, Res]) ActorsInner() stagekit.Inner[Req, Res] { return f.kit().ActorsInner() }

// ErrNilFunc matches the error of a FuncService made from a nil function;
// it also matches troupe.ErrBadConfig.
var ErrNilFunc = stagekit.ErrNilFunc
