package fallback

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
)

// Func computes the outcome of a call that failed with err. It runs on the
// caller's goroutine with the call's context. req is the request as it
// came to the fallback stage: a Filter inside that rewrites requests does
// not change what the fallback is given.
type Func[Req, Res any] func(ctx context.Context, req Req, err error) (Res, error)

// To returns a Func that sends the failed call's request to alt, an
// alternative service (a replica, a degraded mode), with troupe.Do.
func To[Req, Res any](alt troupe.Service[Req, Res]) Func[Req, Res] {
	if alt == nil {
		return nil
	}
	return func(ctx context.Context, req Req, _ error) (Res, error) { return troupe.Do(ctx, alt, req) }
}

// ErrFailed is matched by the error of a call whose fallback failed too;
// that error also wraps the fallback's error and the original one.
var ErrFailed = errors.New("fallback: the fallback failed")

// Option configures a Fallback whose responses are of type Res. Capacity
// and When are Settings, good for a fallback of any response type;
// WhenResult takes a function of the response, so the compiler checks that
// it is the stage's. Options are plain values, safe for concurrent use.
type Option[Res any] func(*options)

// Setting is an Option for a fallback of any response type.
type Setting = func(*options)

type options struct {
	capacity  int
	when      func(error) bool
	whenSet   bool
	result    any // func(Res, error) bool, checked by New
	resultSet bool
}

// Capacity sets the stage's mailbox capacity. The default, 0, sets no limit
// of its own: the stage admits what the stages outside it admit.
func Capacity(n int) Setting { return func(o *options) { o.capacity = n } }

// When sets which errors the fallback answers: those for which accept
// returns true. By default every error does, unless the call's context has
// ended (nobody waits for a fallback then). accept runs where the
// error was produced, possibly a stage's actor: it must not block. It must
// be safe for concurrent use. A nil accept is New's error.
func When(accept func(error) bool) Setting {
	return func(o *options) { o.when, o.whenSet = accept, true }
}

// WhenResult sets which outcomes the fallback answers, results included:
// those for which accept returns true (failsafe-go's HandleIf), a success
// such as an empty or stale response as well as an error. It replaces
// When. A success it accepts reaches the fallback's Func with an error
// matching ErrResult (the call did not fail: its result was refused); a
// fallback that fails then wraps ErrResult as its original error. accept
// runs where the outcome was produced, possibly a stage's actor: it must
// not block, and it must be safe for concurrent use; a panic in it is the
// call's outcome, as one in When. Res is the stage's response type,
// inferred from accept: a function of other types does not compile, and a
// nil one is New's error (troupe.ErrBadConfig).
func WhenResult[Res any](accept func(res Res, err error) bool) Option[Res] {
	return func(o *options) { o.result, o.resultSet = accept, true }
}

// ErrResult is matched by the error a fallback's Func is given for a
// success that WhenResult refused.
var ErrResult = errors.New("fallback: the result was refused")

// Counts are a fallback stage's counters: its Stats' Detail. A plain value.
type Counts struct {
	Taken  uint64 // calls answered by the fallback
	Failed uint64 // of those, calls whose fallback failed too
}

// Fallback is a running fallback stage: a troupe.Service and a
// troupe.Closer. It is safe for concurrent use.
type Fallback[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	b *behavior[Req, Res]
}

// Counts returns the stage's counters.
func (f *Fallback[Req, Res]) Counts() Counts { return f.b.counts() }

func (b *behavior[Req, Res]) counts() Counts {
	return Counts{Taken: b.taken.Load(), Failed: b.failed.Load()}
}

// Detail is the stage's Stats' Detail: its Counts (stagekit.Detailer).
func (b *behavior[Req, Res]) Detail() any { return b.counts() }

// New spawns a fallback stage over inner in host h (nil is an error) that
// answers inner's failures with fn. A nil fn or a bad capacity is an error
// matching troupe.ErrBadConfig.
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], fn Func[Req, Res], opts ...Option[Res]) (*Fallback[Req, Res], error) {
	var o options
	if err := opt.Apply("fallback", &o, opts); err != nil {
		return nil, err
	}
	switch {
	case fn == nil:
		return nil, opt.Nil("fallback", "the fallback function")
	case o.whenSet && o.when == nil:
		return nil, opt.Nil("fallback", "When's function")
	}
	result, ok := opt.As[func(Res, error) bool](o.result)
	if !ok || o.resultSet && result == nil {
		return nil, opt.Bad("fallback", "WhenResult", fmt.Sprintf("%T", o.result), fmt.Sprintf("need a non-nil func(%T, error) bool", *new(Res)))
	}
	b := &behavior[Req, Res]{fn: fn, when: o.when, result: result, children: stagekit.NewPool[Req, Res]()}
	st, err := stagekit.Spawn(h, stagekit.Config{Name: "fallback", Capacity: o.capacity, CallerPath: true}, inner, b)
	if err != nil {
		return nil, fmt.Errorf("fallback: %w", err)
	}
	b.st = st
	f := &Fallback[Req, Res]{b: b}
	f.Handle = stagekit.NewHandle(st, nil)
	return f, nil
}

// Layer returns a layer that answers the failures of the service inside it
// with fn.
func Layer[Req, Res any](fn Func[Req, Res], opts ...Option[Res]) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New(h, inner, fn, opts...)
	})
}

// behavior puts the stage's frame on each request and forwards it; the
// frame's hook takes the failures. Its fields are set by New, then
// read-only, but for the counters.
type behavior[Req, Res any] struct {
	stagekit.Passthrough[Req, Res]
	fn       Func[Req, Res]
	when     func(error) bool          // nil: the default
	result   func(Res, error) bool     // WhenResult's; nil: When decides
	st       *stagekit.Stage[Req, Res] // set by New, before any request
	children *sync.Pool                // envelopes the fallback runs with
	taken    atomic.Uint64
	failed   atomic.Uint64
}

// Request puts the stage's frame on e and forwards it (actor).
func (b *behavior[Req, Res]) Request(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	if _, err := e.Push(b); err != nil {
		s.Answer(e, err)
		return
	}
	s.Forward(e)
}

// RequestOnCaller puts the stage's frame on e and sends it on, on the
// caller's goroutine (stagekit.CallerRequester): Request without the actor.
func (b *behavior[Req, Res]) RequestOnCaller(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) bool {
	if _, err := e.Push(b); err != nil {
		s.Inner().Unreserve()
		var zero Res
		s.Respond(e, zero, err)
		return true
	}
	s.FreeSlot()
	s.SendOnCaller(e)
	return true
}

// Ordinary reports true: the stage has no state of its own that a request
// must wait behind (stagekit.CallerRequester).
func (b *behavior[Req, Res]) Ordinary() bool { return true }

// Complete is the hook of the stage's frames: the inner outcome. An error
// the fallback takes is kept (EventFallback), and the fallback handed to
// the caller.
func (b *behavior[Req, Res]) Complete(e *stagekit.Envelope[Req, Res], f *stagekit.Frame[Req, Res], out stagekit.Outcome[Res]) stagekit.Outcome[Res] {
	res, err := out.Res, out.Err
	if (err == nil && b.result == nil) || e.Delivered() { // a success only WhenResult may refuse
		return stagekit.Outcome[Res]{Res: res, Err: err}
	}
	ctx := f.Context() // the caller's, as the stage got it: not one a stage inside made for the work
	accepted, perr := b.accepts(ctx, res, err)
	if perr != nil {
		return stagekit.Outcome[Res]{Res: res, Err: b.fail(perr, err)}
	}
	if !accepted {
		return stagekit.Outcome[Res]{Res: res, Err: err}
	}
	if err == nil {
		err = ErrResult // a success WhenResult refused: what the observer and the Func are told
	}
	if r := b.st.Reporter(); r != nil {
		if perr := r.Report(troupe.Event{Type: troupe.EventFallback, Err: err, Context: ctx}); perr != nil {
			return stagekit.Outcome[Res]{Res: res, Err: stagekit.JoinPanic(perr, err)} // the observer panicked: no fallback
		}
	}
	b.taken.Add(1)
	r := &run[Req, Res]{b: b, parent: e, pos: f.Pos(), orig: err} // failures only: not pooled
	e.Ref()                                                       // until the fallback's outcome goes on
	// The request as it came to the stage: its run is the caller's,
	// whatever the stages inside did to it.
	o := f.Origin()
	stagekit.NewChildOf(b.children, &o, ctx, f.Request(), r).HandToCaller(r)
	return stagekit.Outcome[Res]{Res: res, Err: err, Kept: true}
}

// accepts runs WhenResult or When (or the default) under stagekit.Guard.
func (b *behavior[Req, Res]) accepts(ctx context.Context, res Res, err error) (bool, error) {
	if b.result != nil {
		return stagekit.Guard1("fallback: WhenResult", func() (bool, error) { return b.result(res, err), nil })
	}
	if b.when == nil {
		return ctx.Err() == nil, nil // every error, unless the caller gave up
	}
	return stagekit.Guard1("fallback: When", func() (bool, error) { return b.when(err), nil })
}

// fail is the error of a call whose fallback failed with fbErr; orig is
// nil when the call succeeded (WhenResult panicked on its result).
func (b *behavior[Req, Res]) fail(fbErr, orig error) error {
	b.failed.Add(1)
	if orig == nil {
		return fmt.Errorf("%w: %w", ErrFailed, fbErr)
	}
	return fmt.Errorf("%w: %w (the original error: %w)", ErrFailed, fbErr, orig)
}

// run is one fallback in progress: the leaf the caller runs, and the hook
// of the envelope it runs with, which takes its outcome on to the frames
// outside the stage's.
type run[Req, Res any] struct {
	b      *behavior[Req, Res]
	parent *stagekit.Envelope[Req, Res] // the failed call; referenced until done
	pos    int                          // the stage's frame on parent
	orig   error                        // the failure
}

// Name names the fallback in a *troupe.PanicError.
func (r *run[Req, Res]) Name() string { return "fallback: Func" }

// Call runs the fallback function (stagekit.Leaf), on the caller's goroutine.
func (r *run[Req, Res]) Call(ctx context.Context, req Req) (Res, error) {
	return r.b.fn(ctx, req, r.orig)
}

// Complete takes the fallback's outcome on to the parent's frames outside
// the stage's.
func (r *run[Req, Res]) Complete(_ *stagekit.Envelope[Req, Res], _ *stagekit.Frame[Req, Res], out stagekit.Outcome[Res]) stagekit.Outcome[Res] {
	res, err := out.Res, out.Err
	if err != nil {
		if r.parent.Delivered() {
			err = r.orig // nobody sees it: the caller no longer waits
		} else {
			err = r.b.fail(err, r.orig)
		}
	}
	r.parent.CompleteAt(r.pos-1, res, err)
	r.parent.Unref()
	return stagekit.Outcome[Res]{Res: res, Err: err}
}
