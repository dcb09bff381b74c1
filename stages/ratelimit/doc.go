// Package ratelimit is tower's RateLimit as a troupe stage: at most Num
// requests per period Per reach the service inside it.
//
// A Rate is Num requests per Per, both greater than zero; anything else is
// an error at construction matching troupe.ErrBadConfig, never a panic.
//
// On the readiness path, the default mode is tower's fixed window, one per
// stage:
//
//   - A call spends one unit when the stage's actor takes the request from
//     its mailbox; it is then forwarded. The call that spends the last unit
//     of the window is still forwarded, and puts the limiter in the Limited
//     state.
//   - While Limited, reserving on the stage waits (the mailbox's admission
//     is closed: TryReserve reports not ready, so a LoadShed above sheds),
//     and the stage takes no further requests: those reserved or queued
//     before wait in the bounded mailbox. When the window ends, the stage's
//     alarm opens a new window of Num, admission and intake resume, and the
//     queued requests go first, in order.
//   - A call taken when the current window has passed opens a fresh window
//     starting at that call: sporadic traffic is never limited wrongly.
//   - Improvement over tower: after a Limited window, the new window
//     starts at the old window's end, not when the alarm handler happens to
//     run, so scheduling delay does not lose rate. If that end is a whole
//     period or more in the past, the chained window is over already and the
//     new one starts at the time the limiter notices, as after a quiet
//     spell.
//
// The smooth mode (Smooth(burst)) replaces the window with GCRA, a
// token bucket kept as one time: calls go one interval (Per/Num, rounded up
// to the nanosecond) apart, and burst of them may go at once after a quiet
// spell. With burst 1, any span of Per holds at most Num calls. A call
// that finds no unit makes the stage Limited until the next one, exactly as
// in the fixed window.
//
// A caller that finds the stage Limited and whose context's deadline ends
// before its turn could come is refused at once, as x/time/rate's Wait
// refuses, with a *LimitedError matching ErrLimited, troupe.ErrFull and
// context.DeadlineExceeded: its turn is the unit after those the stage
// keeps, plus one per request queued or waiting ahead of it. This holds
// for a Reserve, a call through the stage, and a request a stage outside
// parks for a unit (a Timeout's deadline counts; that stage answers the
// request with the refusal and carries on). A request already queued in
// the stage's mailbox when it went Limited waits for its turn, or its
// deadline. MaxWait(d) refuses at once, likewise, a caller whose turn
// would come more than d after it finds the stage Limited (failsafe-go's
// rate limiter WithMaxWaitTime).
//
// Cost(func(Req) int) makes each request take that many units at once
// (x/time/rate's WaitN): it goes when they are left and waits for them
// otherwise; a cost below 1, or above the window's Num or the smooth
// mode's burst, is answered at once with a *CostError (ErrCost).
//
// SetRate and SetBurst change the rate and the smooth mode's burst while
// the stack runs, with x/time/rate's SetLimit and SetBurst semantics: what
// the old rate gave up to the change is kept, and units come at the new
// rate from then on; callers already waiting get their turn by it.
//
// The stage uses one timer, its stagekit.Alarm, made at construction and reset
// for every window or interval: never a timer per window or per request.
// The arithmetic is in functions that take the time as an argument
// and never read the clock.
//
// On the response path the stage does nothing: outcomes pass it by.
//
// # Rates finer than the timer
//
// A Limited stage waits for its alarm, a Go timer, and timers commonly
// fire a millisecond or so late. A window whose period is shorter than
// that lateness ends before the alarm notices it, and a smooth limit with
// burst 1 keeps its spacing from the late alarm on (strict spacing wins
// over catching up), so both deliver less than their rate: measured on a
// 2-core Linux machine whose timers fired about 1.1 ms late, 10 per 1 ms
// delivered 83-86 % of its rate, 100 per 10 ms 99.9 %, and 10,000 a second
// smooth with burst 1 (100 us apart) 9 %. For a rate of more than a few
// hundred a second, state it over 10 ms or more (100 per 10 ms rather than
// 10 per 1 ms), or give Smooth a burst worth a few milliseconds of the
// rate, so that the units owed while the alarm was late can go together.
//
// # A limiter shared with other processes
//
// With Remote(l), the stage counts nothing itself: it asks l, a Limiter,
// for every unit, and l answers for every process that shares it (package
// redisquota keeps such a rate in Redis). The round trip never runs on
// the stage's actor:
//
//   - The actor takes a request and starts an ask: a goroutine of the
//     stage's own calls l.Allow with the request's context and posts the
//     answer back. At most MaxAsks asks run at once, and only one right
//     after the stage was Limited; while none may start, the stage takes
//     no requests, which wait in its bounded mailbox.
//   - A yes forwards the request. A no keeps it, first in line, and makes
//     the stage Limited for the retry-after l gave, exactly as a spent
//     window does: reservations wait, TryReserve reports not ready, and the
//     stage's one alarm is set for then; when it fires, the stage asks
//     again. A yes that says it was the last unit for a while makes the
//     stage Limited without asking.
//   - An error from l is the call's outcome (matching ErrLimiter); it does
//     not make the stage Limited. Whether l denies or decides locally when
//     its store is away is l's choice.
//   - A call whose caller gives up while its ask runs gets its context's
//     error; the unit the limiter may have granted it is lost.
//
// The in-process limiter is the default, and unchanged: a stage without
// Remote pays nothing for it.
//
// Where this differs from tower, and what to know:
//
//   - One limiter serves every caller and every copy of the handle (tower's
//     RateLimit is per clone): the stage is one actor.
//   - A unit is spent when the stage takes the request, before it asks the
//     inner service for readiness. If the inner service is not ready, the
//     request waits parked in the stage (which takes nothing else meanwhile),
//     so it can reach the inner service after the window it was counted in.
//     tower spends when its inner service is ready. Put the rate limit
//     innermost, as tower's own examples do, to meter what the downstream
//     sees.
//   - A fixed window counts calls per window, not per sliding span: calls at
//     the end of one window and the start of the next may add up to 2*Num
//     within Per. Under saturation every window's calls go at its start, so
//     any span of Per sees at most Num. Use the smooth mode with burst 1 when
//     every span must hold at most Num.
//   - Requests that wait in the mailbox while Limited and whose callers give
//     up keep their slots until the stage takes them, at the next unit; they
//     spend nothing.
//
// An observer attached to the stack (troupe.Observer) is told when the
// stage goes Limited and ready again (troupe.EventStateChanged, "ready"
// and "limited"), on the stage's actor.
//
// A RateLimit is safe for concurrent use; Limited and Snapshot may be
// called from any goroutine.
package ratelimit
