// Package stagekit is troupe's runtime for writing stages: a stage is a
// protoactor-go actor with a reservation mailbox (the runtime's own), a
// Behavior that makes it a timeout, a retry, a buffer..., and the inner
// service it hands requests on to. Users of troupe do not need this
// package (see packages actors and stages); it is for writing a stage of
// your own, and this documentation is what you need to do it.
//
// # The rules
//
// A stage package follows ten rules. ExampleHook is a stage that wraps
// the call (a frame on every request); ExampleBehavior one with a line of
// waiting callers (requests kept until a control message lets them go).
//
//  1. Check the options, then Spawn: Spawn(h, Config{Name: "kind",
//     Capacity: n}, inner, behavior). A bad option is a *troupe.ConfigError
//     naming it (CheckCapacity reads a capacity as every stage does: 0 is
//     no limit of its own), never a panic.
//  2. Give users a type that embeds the Handle made by NewHandle(st, nil)
//     (Reserve, ReserveAndCall, Close, Name, Stats), plus read-only
//     accessors of your own, and a Layer function; never export the
//     *Stage. A behavior that is a Detailer gives the Stats their Detail.
//  3. Embed Passthrough in the behavior and override what you need. Every
//     request Request gets is forwarded (Stage.Forward), answered
//     (Stage.Answer, Stage.Respond) or kept; a kept request is forwarded or
//     answered later, and answered by Fail; Idle is false while any is
//     kept. A behavior that keeps a request and calls the inner service in
//     the same Request says so first (Stage.Keep).
//  4. The behavior's methods, and the Stage's methods that change it
//     (Forward, SendInner, Answer, Respond, AnswerParked, Parked, SetInner,
//     Break, Escalate, PauseRequests, SetAdmission), run on the stage's actor, one at a
//     time, and never block; calling those elsewhere is a data race.
//     Anywhere: PostControl (it arrives in Control), Recheck, Reserve,
//     TryReserve, ReserveAndCall, Close, Name, TakeSlot, GiveSlot,
//     ClosedErr, Alarm.Set and
//     Stop; Behavior.Dropped.
//  5. What runs beside the actor, several at once, touches only what the
//     behavior guards itself: a SendHook's OnSend (on the sender's
//     goroutine, before the request is queued), a CallerAdmitter's or
//     CallerRequester's methods (on the caller's goroutine, for a stage
//     spawned with Config.CallerPath while it is in its ordinary state),
//     and a frame's Hook.Complete.
//  6. To see a request's outcome, push a Frame (Envelope.Push) while
//     holding the request; answer it with ErrTooDeep when no frame is left.
//     Complete runs exactly once per frame, wherever the outcome is
//     produced; it must not block, and returns the Outcome to pass on (or
//     one with Kept set when it takes the outcome over).
//  7. Run user code (a policy, a predicate, a callback) through Guard or
//     Guard1, so that its panic is the outcome of the calls it affects, a
//     *troupe.PanicError, never a crash; run blocking work on a goroutine
//     of its own that reports with PostControl, and cancel it in Fail.
//  8. When Idle becomes true off the actor (the last call a stage watched
//     completed in a Hook), call Stage.Recheck there, or a closing stage
//     waits until Close's context ends.
//  9. Once the stage forwards or answers an envelope, it no longer touches
//     it, unless it took a reference (Envelope.Ref) that it drops
//     (Unref) when it lets go; the frame's Deadline, Aux and list links are
//     the pushing stage's.
//  10. Report the stage's own events only through Stage.Reporter, which
//     is nil when nothing observes: test it before building the Event, and
//     make a panic Report returns the outcome of the call it belongs to
//     (JoinPanic).
//
// The sections below say how the runtime works, for the stage that needs
// more than these rules: frames, observing, envelope references and
// attempts, readiness, and the paths of a request and its outcome.
//
// # Where work runs
//
// On the sender's goroutine instead of the actor, for a stage spawned with
// Config.CallerPath while it is in its ordinary state (nothing parked,
// queued or paused, its actor not running, the behavior's
// CallerRequester.Ordinary true, the inner service ready now), a request
// crosses the stage without entering the actor: forwarded as it is, or as
// CallerAdmitter.AdmitOnCaller admits it (a rate limit's spare unit), or
// handled by CallerRequester.RequestOnCaller (a retry's session and first
// attempt, sent with SendOnCaller; an adaptive limit's admission at its
// gate, which declines when the gate is closed). Otherwise it takes the
// actor's path, exactly as without CallerPath. A panic in the behavior
// itself is caught by the mailbox: the requests the stage holds get a
// *troupe.RestartError at once, and the host's Strategy restarts or stops
// the stage. A closing stage stops once its mailbox is empty, no request
// is parked, no caller that entered by it still waits, and Behavior.Idle
// reports true; it asks Idle after each message it processes, and Recheck
// costs an atomic load unless the stage is draining.
//
// # Frames and the frame limit
//
// A stage that must see a request's outcome pushes a Frame (Envelope.Push)
// while it holds the envelope. An envelope has MaxFrames (16) of them: a
// request can pass at most 16 stages that watch the response; Push returns
// ErrTooDeep beyond, and the stage answers the request with it. A frame's
// Deadline, Aux and list links belong to the stage that pushed it. A stage
// that keeps slots until the outcome (a concurrency limit) sets
// Config.HoldUntilOutcome instead: the runtime pushes its frame. With an
// observer attached, the runtime pushes one more frame per stage (to
// report EventFinished); a request with no frame left for it enters the
// stage unobserved rather than fail.
//
// # Observing
//
// When an observer is attached (to the stack, or to the system: see
// troupe.Observer), Spawn gives the stage a Reporter, and the runtime
// reports for every stage: EventAccepted as a request is sent into a slot
// (on the sender's goroutine, after the SendHook; a SendHook's refusal is
// an EventRejected instead), EventRejected whenever the stage answers a
// request itself (Stage.Answer; implement Rejecter to name the Reason of
// your own errors), EventFinished when an accepted request's outcome
// leaves the stage (on a frame the runtime pushes for it, below the
// SendHook's, wherever the outcome is produced), EventStarted where the
// downstream call runs, and EventRestarted when the supervisor restarts
// the stage. A stage reports its policy's own events (a retry, a timeout,
// a change of state) through Stage.Reporter, which is nil when nothing is
// attached: test it first, and build the Event only behind that test. A
// panic in the observer is logged and returned by Report; make it the
// outcome of the call the event belongs to (JoinPanic) where that is clean,
// never lose or double that outcome for it. The observer runs on the
// goroutine that reports: an actor's, a caller's, a hook's.
//
// # Envelope references
//
// Envelopes are pooled. The stage holding an envelope (the path holder) owns
// its Ctx, Req and frames; once it forwards or answers it, it must not touch
// it again. A stage that keeps a pointer to an envelope beyond that (in a
// list of calls in flight, a timer) takes a reference (Envelope.Ref) and
// drops it (Unref) when it lets go; the envelope is reused at zero
// references. A stage that replaces the context below it uses
// Envelope.SetCtx, saying whether it cancels that context itself when it is
// closed; a context of its own type should implement the context package's
// AfterFunc hook (with AfterFuncs), so that the contexts work derives from
// it need no goroutine each, and WorkStopper, so that the caller's leaf
// work runs with it as it is instead of with a context made around it.
// Attempts made from a request are child envelopes (NewChild) that report
// to the same caller. A stage may instead send the request itself on down
// the path with a frame of its own on top and still make attempts from it
// later (NewChildOf, from the Origin taken while it held the request), as
// Retry and Hedge do with their first
// attempts: a Ride pushes that frame (only while half of the request's
// frames are free: deeper, the first attempt goes in an envelope of its own
// too), holds a reference on the request, and decides which reaches the
// frame first, the path's outcome or the stage's own (Ride.End claims the
// frame; the path's outcome is then discarded there). The slot goes with
// Stage.FreeSlot, as Respond would free it.
//
// # Readiness
//
// A stage's readiness is a slot of its mailbox. Forward takes a unit of the
// inner service without blocking (Inner.TryReserve); when there is none the
// stage parks the request, keeping its slot, pauses its mailbox, and is
// granted a unit by a control message: backpressure travels upstream, and
// the response path keeps flowing meanwhile. An inner readiness error breaks
// the stage: every request it holds, and every later one, gets a
// *troupe.ClosedError wrapping it; the calls it handed on before finish with
// their own outcomes, and the stage stops once they have (Stage.Broken says
// what a behavior's Fail answers then).
//
// # The request path
//
// A caller reserves a slot in the outermost stage's mailbox (its readiness),
// then calls: the request is put in an [Envelope] that carries the caller's
// context, and posted into the reserved slot. Each stage actor takes the
// envelope, does its work, and hands it on to its inner service with a
// reservation it takes there without blocking; when the inner service is not
// ready, the stage keeps the envelope, pauses its mailbox and is told by a
// control message when a slot is granted.
//
// # Where the downstream call runs
//
// The innermost service is a plain function (see [Func]). The last stage
// does not call it: it hands the pending call back to the caller, whose
// goroutine is waiting anyway, and the caller runs it (as tower's Buffer hands
// the inner future back to the caller). No actor ever blocks on
// downstream work, and the downstream sees as many concurrent calls as there
// are callers the stages let through.
//
// # The response path
//
// Stages that care about the outcome push a [Frame] on the envelope as the
// request goes down. Whoever produces the outcome (the caller that ran the
// function, a stage that rejects the request, a timeout that fires) completes
// the frames from the top down, each exactly once; a frame's [Hook] can
// change the outcome, or take it over (Retry). The last frame hands the
// outcome to the caller. No stage actor sits on the response path unless it
// must act (Retry's wait and re-reservation), so a response costs no hops.
package stagekit
