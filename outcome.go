package troupe

import (
	"context"
	"errors"
)

// Outcome classifies the outcome of a call for an [Observer]. A plain
// value, safe for concurrent use.
type Outcome uint8

// The outcome classes, as [Classify] decides them.
const (
	// OutcomeSuccess: no error.
	OutcomeSuccess Outcome = iota
	// OutcomeFailure: any other error (the service's, a closed or broken
	// stage's, a breaker's or load shedder's refusal).
	OutcomeFailure
	// OutcomeCanceled: the context was cancelled (the caller gave up, or
	// the call's outcome was no longer wanted).
	OutcomeCanceled
	// OutcomeTimeout: a deadline passed, a timeout stage's or the
	// caller's (the error matches context.DeadlineExceeded).
	OutcomeTimeout
	// OutcomePanic: user code panicked (the error matches ErrPanic), the
	// request's stage among others (a *RestartError).
	OutcomePanic
)

var outcomeNames = [...]string{
	OutcomeSuccess:  "success",
	OutcomeFailure:  "failure",
	OutcomeCanceled: "canceled",
	OutcomeTimeout:  "timeout",
	OutcomePanic:    "panic",
}

// String returns "success", "failure", "canceled", "timeout" or "panic".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// Classify returns the outcome class of err: OutcomeSuccess for nil,
// OutcomePanic when it matches ErrPanic, OutcomeTimeout when it matches
// context.DeadlineExceeded, OutcomeCanceled when it matches
// context.Canceled, OutcomeFailure otherwise; the first that matches.
func Classify(err error) Outcome {
	switch {
	case err == nil:
		return OutcomeSuccess
	case errors.Is(err, ErrPanic):
		return OutcomePanic
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	case errors.Is(err, context.Canceled):
		return OutcomeCanceled
	}
	return OutcomeFailure
}

// Reason says why a stage rejected a request (EventRejected). A plain
// value, safe for concurrent use.
type Reason uint8

// The reasons.
const (
	// ReasonOther: any other error (a connection that could not be made,
	// a request that passed too many stages, user code that panicked).
	ReasonOther Reason = iota
	// ReasonClosed: the stage was closed, or broken by its inner service.
	ReasonClosed
	// ReasonRestarted: the stage failed while it held the request, and
	// was restarted.
	ReasonRestarted
	// ReasonCanceled: the caller's context ended (cancelled or past its
	// deadline) before the stage handed the request on, or the caller no
	// longer waited for it.
	ReasonCanceled
	// ReasonOverloaded: a load shedder shed the request.
	ReasonOverloaded
	// ReasonOpen: a circuit breaker refused the request.
	ReasonOpen
	// ReasonFiltered: a filter's predicate or check rejected the request.
	ReasonFiltered
)

var reasonNames = [...]string{
	ReasonOther:      "other",
	ReasonClosed:     "closed",
	ReasonRestarted:  "restarted",
	ReasonCanceled:   "canceled",
	ReasonOverloaded: "overloaded",
	ReasonOpen:       "open",
	ReasonFiltered:   "filtered",
}

// String returns the reason's name: "closed", "overloaded", ...
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "unknown"
}
