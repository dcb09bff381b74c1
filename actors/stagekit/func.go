package stagekit

import (
	"context"

	"github.com/troupe-go/troupe"
)

// ErrNilFunc is matched by the error of a FuncService made from a nil
// function: Validate's, so Build and every stage spawned over it refuse it,
// and every reservation's. It is a *troupe.ConfigError.
var ErrNilFunc error = &troupe.ConfigError{Stage: "actors.Func", Option: "function", Why: "nil"}

// FuncService is the innermost service made from a plain function. It is
// always ready: limits belong to the stages above it. Its function runs on
// the goroutine of the caller that made the request, never on an actor
// (see the package documentation), so it may block; it should honour its
// context, since a Timeout above it can only be as prompt as the function's
// response to cancellation. A panic in the function becomes a
// *troupe.PanicError outcome.
//
// Like every service, it can only be called through a permit: it has no
// call method of its own.
//
// A FuncService is safe for concurrent use; it has no state but its permits.
type FuncService[Req, Res any] struct {
	fn      func(context.Context, Req) (Res, error)
	label   string
	bad     error // BadFunc's error; nil otherwise
	permits troupe.PermitSource[Req, Res]
}

// Func returns the service that calls fn. name, when given, names it in
// errors. A nil fn is refused by Validate, and so by Build and by every
// stage spawned over it.
func Func[Req, Res any](fn func(context.Context, Req) (Res, error), name ...string) *FuncService[Req, Res] {
	f := &FuncService[Req, Res]{fn: fn, label: "func"}
	if len(name) > 0 {
		f.label = name[0]
	}
	return f
}

// BadFunc returns the FuncService a leaf constructor with no error result
// (troupehttp.Client) hands back for a bad configuration: its Validate
// returns err, so Build and every stage spawned over it refuse it with
// err, as does every reservation. err should match troupe.ErrBadConfig.
func BadFunc[Req, Res any](name string, err error) *FuncService[Req, Res] {
	return &FuncService[Req, Res]{label: name, bad: err}
}

// Validate reports a FuncService made from a nil function (ErrNilFunc), or
// by BadFunc (its error).
func (f *FuncService[Req, Res]) Validate() error {
	switch {
	case f == nil:
		return ErrNilFunc
	case f.bad != nil:
		return f.bad
	case f.fn == nil:
		return ErrNilFunc
	}
	return nil
}

// Reserve returns a permit at once, unless ctx is already done.
func (f *FuncService[Req, Res]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return f.permits.Issue((*funcCall[Req, Res])(f)), nil
}

// Name returns the service's name.
func (f *FuncService[Req, Res]) Name() string { return f.label }

// ActorsInner returns the service's Inner side, for the stage outside it.
func (f *FuncService[Req, Res]) ActorsInner() Inner[Req, Res] { return (*funcInner[Req, Res])(f) }

// funcCall is a FuncService seen by its permits (troupe.Reservation) and by
// the callers it hands work to (Leaf).
type funcCall[Req, Res any] FuncService[Req, Res]

// Call runs the function on the calling goroutine. A panic in it becomes a
// *troupe.PanicError.
func (f *funcCall[Req, Res]) Call(ctx context.Context, req Req) (Res, error) {
	return Guard1(f.label, func() (Res, error) { return f.fn(ctx, req) })
}

// Name names the function in the *troupe.PanicError its panic becomes.
func (f *funcCall[Req, Res]) Name() string { return f.label }

// Release does nothing: a FuncService holds no capacity.
func (f *funcCall[Req, Res]) Release() {}

// funcInner is a FuncService seen by the stage outside it (Inner).
type funcInner[Req, Res any] FuncService[Req, Res]

// TryReserve: always ready unless the function is nil.
func (f *funcInner[Req, Res]) TryReserve() (bool, error) {
	if err := (*FuncService[Req, Res])(f).Validate(); err != nil {
		return false, err
	}
	return true, nil
}

func (f *funcInner[Req, Res]) ReserveAsync(*Waiter) (bool, error) { return f.TryReserve() }

func (f *funcInner[Req, Res]) CancelWait(*Waiter) bool { return false }

func (f *funcInner[Req, Res]) Unreserve() {}

// Send: the caller of e runs the function.
func (f *funcInner[Req, Res]) Send(e *Envelope[Req, Res]) { e.HandToCaller((*funcLeaf[Req, Res])(f)) }

// funcLeaf is a FuncService handed to a caller to run (Leaf): the caller
// runs it under recover already (runLeaf).
type funcLeaf[Req, Res any] FuncService[Req, Res]

func (f *funcLeaf[Req, Res]) Call(ctx context.Context, req Req) (Res, error) { return f.fn(ctx, req) }

// Name names the function in the *troupe.PanicError its panic becomes.
func (f *funcLeaf[Req, Res]) Name() string { return f.label }
