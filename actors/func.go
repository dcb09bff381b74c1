package actors

import (
	"context"
	"errors"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/mailbox"
)

// ErrNilFunc is returned by every reservation on a FuncService made from a
// nil function.
var ErrNilFunc = errors.New("actors: Func: function is nil")

// FuncService is the innermost service made from a plain function. It is
// always ready: limits belong to the stages above it. Its function runs on
// the goroutine of the caller that made the request, never on an actor
// (see the package documentation), so it may block; it should honour its
// context, since a Timeout above it can only be as prompt as the function's
// response to cancellation. A panic in the function becomes a
// *troupe.PanicError outcome.
//
// A FuncService is safe for concurrent use; it has no state but its permits.
type FuncService[Req, Res any] struct {
	fn      func(context.Context, Req) (Res, error)
	label   string
	permits troupe.PermitSource[Req, Res]
}

// Func returns the service that calls fn. name, when given, names it in
// errors.
func Func[Req, Res any](fn func(context.Context, Req) (Res, error), name ...string) *FuncService[Req, Res] {
	f := &FuncService[Req, Res]{fn: fn, label: "func"}
	if len(name) > 0 {
		f.label = name[0]
	}
	return f
}

// Reserve returns a permit at once, unless ctx is already done.
func (f *FuncService[Req, Res]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	if f.fn == nil {
		return nil, ErrNilFunc
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return f.permits.Issue(f), nil
}

// Call runs the function on the calling goroutine (troupe.Reservation and
// Leaf). A panic in it becomes a *troupe.PanicError.
func (f *FuncService[Req, Res]) Call(ctx context.Context, req Req) (res Res, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = newPanicError(f.label, v)
		}
	}()
	return f.fn(ctx, req)
}

// Name returns the service's name.
func (f *FuncService[Req, Res]) Name() string { return f.label }

// Release does nothing: a FuncService holds no capacity (troupe.Reservation).
func (f *FuncService[Req, Res]) Release() {}

// TryReserve implements Inner: always ready unless the function is nil.
func (f *FuncService[Req, Res]) TryReserve() (bool, error) {
	if f.fn == nil {
		return false, ErrNilFunc
	}
	return true, nil
}

// ReserveAsync implements Inner.
func (f *FuncService[Req, Res]) ReserveAsync(*mailbox.Waiter) (bool, error) { return f.TryReserve() }

// CancelWait implements Inner.
func (f *FuncService[Req, Res]) CancelWait(*mailbox.Waiter) bool { return false }

// Unreserve implements Inner.
func (f *FuncService[Req, Res]) Unreserve() {}

// Send implements Inner: the caller of e runs the function.
func (f *FuncService[Req, Res]) Send(e *Envelope[Req, Res]) { e.HandToCaller(f) }
