// Package stagekit is troupe's runtime for writing stages: a stage is a
// protoactor-go actor with a reservation mailbox (package mailbox), a
// Behavior that makes it a timeout, a retry, a buffer..., and the inner
// service it hands requests on to. Users of troupe do not need this
// package (see packages actors and stages); it is for writing a stage of
// your own, and this documentation is what you need to do it.
//
// # Writing a stage
//
// A stage package does four things:
//
//   - Spawn the stage: Spawn(h, Config{Name: "kind", Capacity: n}, inner,
//     behavior). Check its options first (CheckCapacity reads a capacity as
//     every stage does: 0 is no limit of its own); return a
//     *troupe.ConfigError naming the option for a bad one, never panic.
//   - Give users a type that embeds the Handle made by NewHandle(st, nil):
//     it offers Reserve, ReserveAndCall, Close, Name and Stats and
//     nothing else, and lets the stage outside find this one's Inner side.
//     Add read-only accessors of your own; never export the *Stage. A
//     behavior with counters of its own makes them the Detail of the
//     stage's Stats by being a Detailer.
//   - Write the Behavior: embed Passthrough and override what you need.
//     Request gets each request (an Envelope) the stage took from its
//     mailbox; the stage holds it, and a slot for it, until the behavior
//     forwards it (Stage.Forward), answers it (Stage.Answer, Stage.Respond),
//     or keeps it (then it must answer or forward it later, and answer it
//     when Fail is called; if it calls the inner service after keeping it
//     in the same Request, it says so first with Stage.Keep, so that a
//     panic there leaves e to Fail).
//   - Offer a layer: func Layer[Req, Res any](...) troupe.Layer[Req, Res],
//     and, for package stages, a method on its Builder.
//
// # What runs where
//
//   - On the stage's actor goroutine, one at a time, never blocking:
//     Behavior.Request, Control, Fail and Idle; and the Stage methods Forward,
//     SendInner, Answer, Respond, AnswerParked, Parked, SetInner, Break,
//     Escalate, PauseRequests, Context. Calling them elsewhere is a data race.
//   - On the sender's goroutine, before the request is queued: SendHook.OnSend
//     (a timeout starts its clock there).
//   - On the sender's goroutine instead of the actor, for a stage spawned
//     with Config.CallerPath while it is in its ordinary state (nothing
//     parked, queued or paused, its actor not running, the behavior's
//     CallerRequester.Ordinary true, the inner service ready now): the
//     request crosses the stage without entering the actor, forwarded as
//     it is, or as CallerAdmitter.AdmitOnCaller admits it (a rate limit's
//     spare unit), or handled by CallerRequester.RequestOnCaller (a retry's
//     session and first attempt, sent with SendOnCaller; an adaptive
//     limit's admission at its gate, which declines when the gate is
//     closed). Otherwise it takes the actor's path, exactly as without
//     CallerPath. Those methods run beside the actor, several at once:
//     they touch only what the behavior guards itself.
//   - On whichever goroutine produced the outcome (the caller that ran the
//     downstream function, a stage answering, a timer): a Frame's Hook.Complete,
//     exactly once per frame. It must not block; to act on the actor, post a
//     control message (Stage.PostControl), which arrives in Control.
//   - Anywhere: Stage.PostControl, Recheck, Reserve, ReserveAndCall, Close,
//     Name, Mailbox (for counters); Alarm.Set and Stop; Behavior.Dropped
//     (a control message the stopped stage will never process).
//   - User code (a policy, a predicate, a callback) always through Guard or
//     Guard1: a panic in it becomes a *troupe.PanicError for the callers it
//     affects, never a crash. A panic in the behavior itself is caught by the
//     mailbox: the requests the stage holds get a *troupe.RestartError at
//     once, and the host's Strategy restarts or stops the stage.
//   - Blocking work (a dial, a check that waits) on a goroutine of its own,
//     reporting back with PostControl; cancel it in Fail.
//
// # When to recheck
//
// A closing stage stops once its mailbox is empty, no request is parked,
// no caller that entered by it still waits, and Behavior.Idle reports true.
// The stage asks Idle after each message it processes. When Idle becomes
// true on another goroutine (the last call a timeout watched completed in
// a Hook on the caller's goroutine), call Stage.Recheck there, or the stage
// will wait until Close's context ends. Recheck costs an atomic load unless
// the stage is draining.
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
