package stagekit

import (
	"context"
	"errors"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/internal/mailbox"
)

// NOTE: with an observer attached, each stage a request enters puts one
// more frame on its envelope (MaxFrames): the observer costs one frame per
// stage. A request whose envelope has no frame left enters the stage
// unobserved there (no EventAccepted, no EventFinished), rather than fail.

// reporter returns the reporter of a stage of kind named name that Spawn
// starts in host through h: for the observer of h's stack, or else of the
// system; nil when neither has one.
func (host *Host) reporter(h troupe.Host, kind, name string) *Reporter {
	o, pipeline := host.sys.observer, host.sys.pipeline
	if sh, ok := h.(troupe.StageHost); ok {
		if so, sp := sh.Observer(); so != nil {
			o, pipeline = so, sp
		}
	}
	if o == nil {
		return nil
	}
	return newReporter(o, pipeline, kind, name, host.sys.logger)
}

// sendObserved is sendFrom for an open stage with an observer. The request
// gets the stage's observing frame first, below the frames its SendHook
// pushes, so that EventFinished sees the outcome as it leaves the stage (a
// timeout's forced outcome included); then EventAccepted, or, when the
// SendHook refuses it, EventRejected (and the frame reports nothing).
func (s *Stage[Req, Res]) sendObserved(from *mailbox.Mailbox, e *Envelope[Req, Res]) {
	r := s.obs
	var zero Res
	f, err := e.Push((*observing[Req, Res])(s))
	if err != nil {
		f = nil // no frame left: unobserved here (see the NOTE above)
	} else {
		f.Deadline = r.clock.Now()
	}
	if s.hooks != nil && s.hooks.send != nil {
		if err := s.hooks.send.OnSend(s, e); err != nil {
			s.mb.Free() // NOTE: SendHook's contract, as in sendFrom
			e.Answer(zero, s.Rejected(err))
			return
		}
	}
	if f != nil {
		// Accepted: the frame reports EventFinished, with the context the
		// request had here. Kept in the frame, because the hook may run on
		// another goroutine (a timeout's, forcing the outcome) while the
		// path holder gives the envelope another context below.
		f.Aux = acceptedCtx(e.Ctx)
		e.obs = r
		if perr := r.Report(troupe.Event{Type: troupe.EventAccepted, Context: e.Ctx}); perr != nil {
			s.mb.Free()
			e.Answer(zero, perr)
			return
		}
	}
	e.holder.Store(s.mb)
	if err := s.mb.PostFrom(from, e); err != nil {
		e.holder.Store(nil)
		e.Answer(zero, s.Rejected(err))
	}
}

// observing is a stage seen by its observing frames (Hook).
type observing[Req, Res any] Stage[Req, Res]

// Complete reports EventFinished for an accepted request (Aux holds the
// context it was accepted with; nil for one refused at the door), with the
// time since it was accepted (Deadline): an outcome that came after that
// context ended is reported canceled. A panic in the observer joins the
// outcome.
func (o *observing[Req, Res]) Complete(_ *Envelope[Req, Res], f *Frame[Req, Res], out Outcome[Res]) Outcome[Res] {
	res, err := out.Res, out.Err
	ctx, _ := f.Aux.(context.Context)
	if ctx == nil {
		return Outcome[Res]{Res: res, Err: err}
	}
	r := o.obs
	outcome := outcomeOf(err)
	if cerr := ctx.Err(); cerr != nil && (err == nil || !errors.Is(err, cerr)) {
		outcome = troupe.OutcomeCanceled // it came after its caller (or the stage outside) gave up: discarded
	}
	ev := troupe.Event{Type: troupe.EventFinished, Outcome: outcome, Latency: r.clock.Now().Sub(f.Deadline), Err: err, Context: ctx}
	if perr := r.Report(ev); perr != nil {
		err = JoinPanic(perr, err)
	}
	return Outcome[Res]{Res: res, Err: err}
}

// runObserved reports EventStarted for e's leaf work l, then runs it (with
// the context a tracing observer derives for the attempt, see
// troupe.AttemptTracer); when the observer panics, the work is not run:
// its outcome is the panic.
func (e *Envelope[Req, Res]) runObserved(l Leaf[Req, Res], ctx context.Context) (Res, error) {
	r := e.obs
	actx, perr := r.startAttempt(ctx)
	if perr != nil {
		dropLeaf(l)
		var zero Res
		return zero, perr
	}
	res, err := safeRun(l, actx, e.Req)
	return res, r.endAttempt(actx, err)
}

// onRestarting reports the restart the stage's supervisor decided, with
// the failure behind it. What the failed stage held was answered when the
// panic was caught (see panicked); its queue is carried over to the
// restarted actor.
func (s *Stage[Req, Res]) onRestarting() {
	if s.obs != nil {
		_ = s.obs.Report(troupe.Event{Type: troupe.EventRestarted, Err: s.failureOf()}) // logged; no call to tell
	}
}

// acceptedCtx is the context an observing frame keeps: ctx, never nil (nil
// marks a request refused at the door).
func acceptedCtx(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
