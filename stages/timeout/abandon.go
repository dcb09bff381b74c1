package timeout

import "github.com/troupe-go/troupe/actors/stagekit"

// Abandon makes the stage answer a call at its deadline even when the work
// below it ignores its context: the caller gets the timeout error on time,
// the work goes on by itself on a goroutine of its own, and its late
// outcome is discarded.
//
// Abandoned work still counts where it runs: it keeps its slot in this
// stage, whose capacity then bounds the calls in flight below it,
// abandoned ones included, and in every concurrency limit the call passed
// through (a limit outside the timeout), until the work really returns.
// Closing the stage waits for abandoned work too, until Close's context
// ends. The work below a stage in this mode always runs on a goroutine of
// its own, never on the caller's; each call uses two frames of the
// envelope instead of one.
//
// Without Abandon, the work runs on the caller's goroutine, and a caller
// whose work ignores its context gets the timeout error only when the work
// returns.
func Abandon() Option { return func(o *options) { o.abandon = true } }

// The states of an abandoned call's work (callCtx.work).
const (
	workRunning   int32 = iota // the call has no outcome yet, or got it from the work
	workAbandoned              // the call was answered (expired, closed) while its work ran
	workEnded                  // the work returned, or was answered below the stage
)

// watchWork prepares e, just sent to the stage in Abandon mode: its work
// runs on a goroutine of its own, and a frame above the stage's own tells
// when that work ends (the timeout's frame completes at the deadline, the
// work's frame only when the work returns).
func (b *behavior[Req, Res]) watchWork(e *stagekit.Envelope[Req, Res], ctx *callCtx) error {
	w, err := e.Push((*workEnd[Req, Res])(b))
	if err != nil {
		return err
	}
	w.Aux = ctx
	e.Detach()
	return nil
}

// abandoning counts the call of ctx as abandoned, unless its work has
// ended: the stage is about to answer it. The count goes up first, so that
// it never goes below zero when the work ends at the same moment.
func (b *behavior[Req, Res]) abandoning(ctx *callCtx) {
	b.abandoned.Add(1)
	if !ctx.work.CompareAndSwap(workRunning, workAbandoned) {
		b.abandoned.Add(-1) // the work ended first
	}
}

// workEnd is the hook of the work's frame: the behavior, seen from above
// its own frame.
type workEnd[Req, Res any] behavior[Req, Res]

// Complete runs when the work below the stage ends; if its call was
// abandoned, the stage no longer waits for it.
func (w *workEnd[Req, Res]) Complete(_ *stagekit.Envelope[Req, Res], f *stagekit.Frame[Req, Res], out stagekit.Outcome[Res]) stagekit.Outcome[Res] {
	b := (*behavior[Req, Res])(w)
	if f.Aux.(*callCtx).work.Swap(workEnded) == workAbandoned && b.abandoned.Add(-1) == 0 {
		b.st.Recheck() // a draining stage may stop now
	}
	return out
}

// Abandoned reports how many calls were answered (at their deadline, or
// when the stage closed) while their work still runs, in Abandon mode.
func (t *Timeout[Req, Res]) Abandoned() int {
	if t.b.abandoned == nil {
		return 0
	}
	return int(t.b.abandoned.Load())
}
