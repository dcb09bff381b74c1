package stagekit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/troupe-go/troupe"
)

// WithObserver makes every stage spawned in the system report to o, under
// the pipeline name pipeline, unless its stack has an observer of its own
// (stages.Builder.Observe). A nil o is a configuration error (see
// NewSystem).
func WithObserver(o troupe.Observer, pipeline string) Option {
	return func(s *System) {
		if o == nil {
			s.badOption("WithObserver's observer")
		}
		s.observer, s.pipeline = o, pipeline
	}
}

// Reporter reports one stage's events to the observer attached to its
// stack or its system (see troupe.Observer). Spawn makes one when an
// observer is attached, and Stage.Reporter returns it; with none attached
// it is nil, and a stage reports an event only behind a nil check, so that
// it builds no Event and pays nothing else:
//
//	if r := s.Reporter(); r != nil {
//		if err := r.Report(troupe.Event{Type: troupe.EventRetried, Attempt: n}); err != nil {
//			// the observer panicked (logged already): err may become the call's outcome
//		}
//	}
//
// The runtime itself reports EventAccepted, EventRejected (Stage.Answer,
// and refusals at the door), EventStarted, EventFinished (on a frame of
// its own) and EventRestarted; a stage reports its policy's events.
//
// Its fields are set by Spawn, then read-only (the name may change once,
// before the stack's Build returns, see troupe.StageHost): safe for
// concurrent use.
type Reporter struct {
	o        troupe.Observer
	tracer   troupe.AttemptTracer // o, when it traces attempts; nil otherwise
	pipeline string
	kind     string
	name     string
	where    string // names the observer in a *troupe.PanicError
	log      *slog.Logger
	clock    Clock
}

func newReporter(o troupe.Observer, pipeline, kind, name string, log *slog.Logger) *Reporter {
	r := &Reporter{o: o, pipeline: pipeline, kind: kind, log: log, clock: NewClock()}
	r.tracer, _ = o.(troupe.AttemptTracer)
	r.rename(name)
	return r
}

func (r *Reporter) rename(name string) {
	r.name, r.where = name, "observer of "+name
}

// Report tells the observer of ev, with its Pipeline, Stage and StageKind
// filled in. The observer runs on the calling goroutine, under Guard: a
// panic in it is logged through the system's logger and returned, a
// *troupe.PanicError, for the caller to make it the outcome of the call
// the event belongs to, when it cleanly can (see JoinPanic).
func (r *Reporter) Report(ev troupe.Event) error {
	ev.Pipeline, ev.Stage, ev.StageKind = r.pipeline, r.name, r.kind
	err := Guard(r.where, func() { r.o.Observe(ev) })
	if err != nil {
		r.logPanic(ev.Type.String(), err)
	}
	return err
}

func (r *Reporter) logPanic(event string, err error) {
	r.log.Error("troupe: observer panicked", "pipeline", r.pipeline, "stage", r.name, "event", event, "err", err)
}

// startAttempt reports EventStarted for a downstream call about to be made
// with ctx, and returns the context to make it with: ctx, or the one the
// observer's StartAttempt derived when it traces attempts. A panic in the
// observer is logged and returned, as by Report.
func (r *Reporter) startAttempt(ctx context.Context) (context.Context, error) {
	ev := troupe.Event{Type: troupe.EventStarted, Context: ctx}
	if r.tracer == nil {
		return ctx, r.Report(ev)
	}
	ev.Pipeline, ev.Stage, ev.StageKind = r.pipeline, r.name, r.kind
	actx, err := Guard1(r.where, func() (context.Context, error) { return r.tracer.StartAttempt(ctx, ev), nil })
	if err != nil {
		r.logPanic(ev.Type.String(), err)
		return ctx, err
	}
	if actx == nil {
		actx = ctx // a tracer that returned no context traced nothing
	}
	return actx, nil
}

// endAttempt tells a tracing observer that the downstream call made with
// ctx returned err, and returns the attempt's outcome: err, joined with
// the observer's panic if it panicked.
func (r *Reporter) endAttempt(ctx context.Context, err error) error {
	if r.tracer == nil {
		return err
	}
	if perr := Guard(r.where, func() { r.tracer.EndAttempt(ctx, err) }); perr != nil {
		r.logPanic("attempt_ended", perr)
		return JoinPanic(perr, err)
	}
	return err
}

// JoinPanic is the outcome of a call whose user code (an observer, a
// callback) panicked with perr while the call's outcome was err: perr
// when err is nil, otherwise an error matching both.
func JoinPanic(perr, err error) error {
	if err == nil {
		return perr
	}
	return fmt.Errorf("%w (the call's outcome: %w)", perr, err)
}

// Rejecter is implemented by behaviors whose own errors say why a request
// was rejected (a breaker's ErrOpen, a filter's rejection): the runtime
// asks it for the Reason of an EventRejected before it tries its own
// (closed, restarted, canceled), and ReasonOther otherwise. It may run
// on any goroutine: it must be safe for concurrent use.
type Rejecter interface {
	RejectReason(err error) troupe.Reason
}

// Reporter returns the stage's reporter, nil when no observer is attached.
func (s *Stage[Req, Res]) Reporter() *Reporter { return s.obs }

// Rejected reports an EventRejected for a request the stage answers with
// err itself (Stage.Answer does it for you: this is for a behavior that
// answers envelopes its own way), and returns the error to answer it
// with: err, or err joined with the observer's panic. With no observer, or
// a nil err, it returns err and does nothing else. Safe from any
// goroutine.
func (s *Stage[Req, Res]) Rejected(err error) error {
	if s.obs == nil || err == nil {
		return err
	}
	if perr := s.obs.Report(troupe.Event{Type: troupe.EventRejected, Reason: s.reasonOf(err), Err: err}); perr != nil {
		return JoinPanic(perr, err)
	}
	return err
}

// reasonOf says why err rejects a request: the behavior's reason, if it
// has one, or the runtime's.
func (s *Stage[Req, Res]) reasonOf(err error) troupe.Reason {
	if rj, ok := s.beh.(Rejecter); ok {
		if why := rj.RejectReason(err); why != troupe.ReasonOther {
			return why
		}
	}
	switch {
	case errors.Is(err, troupe.ErrRestarted):
		return troupe.ReasonRestarted
	case errors.Is(err, troupe.ErrClosed):
		return troupe.ReasonClosed
	case err == ErrCallerGone, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return troupe.ReasonCanceled
	}
	return troupe.ReasonOther
}

// outcomeOf classifies err for an EventFinished.
func outcomeOf(err error) troupe.Outcome {
	if err == ErrCallerGone {
		return troupe.OutcomeCanceled
	}
	return troupe.Classify(err)
}
