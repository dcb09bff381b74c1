package troupe

import (
	"context"
	"time"
)

// Observer is told what happens in the stages it is attached to: requests
// accepted, rejected and finished, retries, timeouts, sheds, state
// changes, restarts; a balancer's picks and its endpoints coming and
// going. Attach one to a stack ([Builder.Observe], or the Observe method
// of package stages' builder) or to a whole actor system
// (actors.WithObserver), or to a balancer (package stages/balance's
// Observe option): the stages report to it from then on, each event
// naming the pipeline, the stage and its kind.
//
// Observe is called synchronously, on the goroutine where the event
// happens: the caller's own, a stage's actor, a timer's; each event's
// documentation (see [EventType]) says which. So an Observer must be safe
// for concurrent use, must not block and should be quick (count, record
// into a histogram, hand over to a channel that never fills); what it
// does is added to the latency of the call it observes. A panic in
// Observe is never a crash: it is logged through the system's logger,
// and where the event belongs to one call that is still under way, that
// call's outcome becomes an error matching [ErrPanic], joined with the
// outcome it had. A panic at EventAccepted answers the call at once, one
// at EventStarted or EventPicked keeps the downstream call from being
// made, and one at EventRetried or EventFallback ends the call instead of
// retrying or falling back; events no call waits for (a restart, a rate
// limit's change, an endpoint added) are only logged (a balancer's
// through its logger). Every call still gets exactly one outcome.
//
// With no observer attached, a stage pays one nil check per place where
// it would report, and nothing else. Depths of queues are not events:
// read them from the stack ([Stack.Stages], [Stack.Stats]).
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to an Observer.
//
// Safe for concurrent use when f is.
type ObserverFunc func(Event)

// Observe calls f.
func (f ObserverFunc) Observe(ev Event) { f(ev) }

// Event is one thing that happened in a stage. Pipeline, Stage and
// StageKind say where; Type says what, and which other fields are set.
//
// A plain value: an Observer may keep it. Safe for concurrent use.
type Event struct {
	// Type is what happened.
	Type EventType
	// Pipeline is the name given when the observer was attached
	// ("ocr-api").
	Pipeline string
	// Stage is the stage's name in its stack: its kind, numbered by
	// position where a kind repeats ("timeout-2"), or the name given with
	// Named.
	Stage string
	// StageKind is the stage's kind: "limit", "timeout", "retry", ...
	StageKind string
	// Reason says why a request was rejected (EventRejected).
	Reason Reason
	// Outcome classifies a finished request's outcome (EventFinished).
	Outcome Outcome
	// Latency is how long the stage held a finished request, from the
	// moment it accepted it to its outcome (EventFinished).
	Latency time.Duration
	// Attempt numbers a retry or a hedge: 1 for the first attempt after
	// the original (EventRetried, EventHedged).
	Attempt int
	// From and To are the states before and after a change
	// (EventStateChanged): a breaker's "closed", "open", "half-open"; a
	// reconnect's "Idle", "Connecting", "Connected", "Failed", "Closed"; a
	// rate limit's "ready", "limited".
	From, To string
	// Limit is a stage's new concurrency limit (EventLimitChanged).
	Limit int
	// Endpoint names the endpoint of a balancer that the event is about
	// (EventPicked, EventEndpointAdded, EventEndpointRemoved,
	// EventEndpointDrained): its key, formatted with fmt.
	Endpoint string
	// Err is the error of the event: the rejection's, the finished
	// request's (nil on success), the timeout's, the shed's, the failure a
	// fallback answers, the failure that restarted the stage.
	Err error
	// Context is the context of the call the event is about, for an
	// observer that correlates events with a trace or a log line: the
	// caller's context (or one a stage derived from it) on EventAccepted,
	// EventFinished, EventRetried, EventHedged, EventTimedOut, EventShed
	// EventFallback and EventPicked; the context the downstream call is
	// made with on EventStarted. Nil on the other events. The observer
	// must not keep it past the call's outcome.
	Context context.Context
}

// EventType is what an Event reports. A plain value, safe for concurrent
// use.
type EventType uint8

// The events. Every request sent to a stage gets either EventRejected
// alone (refused at the door: the stage was closed, a breaker open, a
// load shedder full, the caller's context done), or EventAccepted and
// then exactly one EventFinished; a request the stage answers itself
// instead of handing it on (a filter's rejection, a close while it waits
// in the stage) gets EventRejected between the two. The other events are
// the policies' own, reported in addition to those.
const (
	// EventAccepted: the stage took a request into one of its slots. On
	// the goroutine that sent it (the caller's, or the actor of the stage
	// outside), before the stage sees it.
	EventAccepted EventType = iota + 1
	// EventRejected: the stage answered a request with an error itself,
	// without handing it on; Reason says why and Err is the error. On the
	// goroutine that answered (the sender's for a refusal at the door, the
	// stage's actor otherwise).
	EventRejected
	// EventStarted: the downstream call below the stage began (once per
	// attempt). Reported by the innermost observed stage the request
	// passed, on the goroutine that runs the call: the caller's, or one of
	// its own for work detached from the caller (a hedge, an abandoned
	// timeout's). An observer that is an [AttemptTracer] is called at
	// StartAttempt instead.
	EventStarted
	// EventFinished: a request the stage accepted has its outcome, as it
	// leaves the stage: Outcome, Latency and Err. On the goroutine that
	// produced the outcome: the caller's after the downstream call, the
	// actor of a stage that answered or forced it (a timeout).
	EventFinished
	// EventRetried: a retry stage sent attempt number Attempt (1 for the
	// first retry). On the retry stage's actor.
	EventRetried
	// EventHedged: a hedge stage sent hedge number Attempt. On the hedge
	// stage's actor.
	EventHedged
	// EventTimedOut: a call's deadline passed at a timeout stage; Err is
	// the timeout error the call gets. On the timeout stage's actor when
	// its timer fires, or where the outcome was produced when the work
	// gave up at the deadline first.
	EventTimedOut
	// EventShed: a load shedder refused a call because the service inside
	// it was not ready; Err is the error the call gets. On the goroutine
	// that sent the call. An EventRejected with ReasonOverloaded comes with
	// it.
	EventShed
	// EventFallback: a fallback stage answers the failure Err with its
	// fallback. Where the failure was produced.
	EventFallback
	// EventStateChanged: the stage changed state, From one To another: a
	// breaker (on a goroutine of its own, in order, before the call whose
	// outcome made the change gets it), a reconnect (on its actor), a rate
	// limit going limited and ready again (on its actor).
	EventStateChanged
	// EventLimitChanged: an adaptive concurrency limit moved to Limit;
	// also reported with the starting limit, on the stage's actor, before
	// its first request.
	EventLimitChanged
	// EventRestarted: the stage's actor was restarted by its supervisor
	// after the failure Err (on the stage's actor, as it restarts); for a
	// reconnect, also each restart of its connection actor (on the
	// reconnect stage's actor).
	EventRestarted
	// EventPicked: a balancer (package stages/balance) picked Endpoint for
	// a call, whose context is Context. On the caller's goroutine, before
	// the call is sent.
	EventPicked
	// EventEndpointAdded: a balancer's set gained Endpoint. On the
	// goroutine that inserted it (the caller of Insert, the balancer's
	// discovery).
	EventEndpointAdded
	// EventEndpointRemoved: Endpoint left a balancer's set: it is picked no
	// more and drains its calls in flight. On the goroutine that removed
	// it.
	EventEndpointRemoved
	// EventEndpointDrained: a removed Endpoint has no call in flight left,
	// and the balancer closed it if it owned it (Err: the close's error).
	// On a goroutine of the balancer's.
	EventEndpointDrained
)

var eventNames = [...]string{
	EventAccepted:        "accepted",
	EventRejected:        "rejected",
	EventStarted:         "started",
	EventFinished:        "finished",
	EventRetried:         "retried",
	EventHedged:          "hedged",
	EventTimedOut:        "timed_out",
	EventShed:            "shed",
	EventFallback:        "fallback",
	EventStateChanged:    "state_changed",
	EventLimitChanged:    "limit_changed",
	EventRestarted:       "restarted",
	EventPicked:          "picked",
	EventEndpointAdded:   "endpoint_added",
	EventEndpointRemoved: "endpoint_removed",
	EventEndpointDrained: "endpoint_drained",
}

// String returns the event's name in snake case: "accepted", "timed_out",
// ...
func (t EventType) String() string {
	if int(t) < len(eventNames) && eventNames[t] != "" {
		return eventNames[t]
	}
	return "unknown"
}

// Observe returns a builder whose stages report to o, under the pipeline
// name pipeline (an observer attached to the actor system is not told of
// them then). A nil o is an error matching ErrBadConfig from Build.
func (b Builder[Req, Res]) Observe(o Observer, pipeline string) Builder[Req, Res] {
	b.obs = &attached{o: o, pipeline: pipeline}
	return b
}

// attached is an observer attached to a stack, with its pipeline name.
// Read-only once made.
type attached struct {
	o        Observer
	pipeline string
}

// Observer returns the observer attached to the stack being built, and its
// pipeline name; nil when none is (the stage then reports to its system's
// observer, if any).
func (h StageHost) Observer() (Observer, string) {
	if h.b == nil || h.b.obs == nil {
		return nil, ""
	}
	return h.b.obs.o, h.b.obs.pipeline
}
