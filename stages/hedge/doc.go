// Package hedge is a hedging stage: when a request has not been answered
// after a delay, one more copy of it is sent to the inner service, and the
// first good outcome wins. It cuts tail latency at the cost of some extra
// load, which a budget bounds.
//
// # Behaviour
//
// The original request is sent as soon as the inner service grants a unit.
// A delay after it was sent, if it has no outcome yet, a hedge is sent: the
// same request again, or the copy Clone makes. A hedge goes through the
// inner service's readiness path like any request: it reserves a unit
// first, waiting in line when the inner service is not ready (and while
// anything waits, the stage takes no new request). MaxHedges more may
// follow, each a delay after the one before.
//
//   - The delay is fixed (Delay), or the p-th percentile (Percentile) of
//     the latencies of recent successful attempts, measured from each
//     attempt's send to its outcome, over a rolling window (Window: the
//     samples of the last span, at most the last n). Until the window has
//     the minimum of samples, the fixed delay is used if one is given;
//     otherwise requests are not hedged. Or it is a function of the
//     hedge's number (DelayFunc), asked once per number when the stage is
//     made.
//   - The first outcome that Final accepts (by default, the first success)
//     is the request's outcome. The contexts of the other attempts are
//     cancelled (their Err is context.Canceled) before the caller gets it,
//     and their outcomes are discarded. An outcome Final refuses (a
//     failure, by default) waits for the other attempts still in flight;
//     when none is left it is the request's outcome: a failure is never a
//     reason to send a hedge (that is a retry's job), and a failed original
//     with a hedge in flight waits for the hedge. The caller gets exactly
//     one outcome.
//   - A budget bounds the hedges: each request deposits into it, each hedge
//     withdraws when it is about to be sent, and a request whose hedge the
//     budget refuses sends no more. By default hedges are at most
//     DefaultRatio of the requests of the last 10 s (MaxRatio changes the
//     ratio, WithBudget takes a budget shared with other stages, NoBudget
//     removes it). The budget is package budget's (the retry budget).
//   - The request is sent as it is, to every attempt at once: Req must be
//     safe to send twice and to share between concurrent attempts (a value,
//     or a pointer to data nothing changes), or Clone must copy it (a
//     request with a body to read, say).
//   - The original's work runs where it would without the stage (the
//     caller's goroutine, for a downstream function); each hedge's work
//     runs on a goroutine of its own. When a hedge wins, the caller returns
//     once the original's work has honoured its cancellation. The stage
//     cancels the losers' contexts only, never the winner's.
//   - A panic in Final or Clone is the request's outcome, a
//     *troupe.PanicError; the stage goes on serving. Cancelling the
//     caller's context cancels every attempt. Closing the stage drains the
//     requests in flight until Close's context ends, then answers them with
//     the close error and cancels their attempts.
//
// Each request holds one slot of the stage from its arrival to its outcome,
// so the capacity (Capacity) bounds the requests being hedged.
//
// # Compared with tower and failsafe-go
//
// tower's Hedge sends at most one hedge, after the delay of a latency
// percentile read from a histogram that rotates every period (the previous
// period's samples), and hedges nothing until that histogram has
// min_data_points; it takes whichever response comes first, error or not,
// has no budget (a policy decides per request whether to hedge), and once
// the delay is over its hedge waits for the readiness of a clone of the
// inner service, as this one waits for a unit of it. Here the
// window slides over the last span instead of rotating, a fixed delay can
// stand in until it fills, several hedges may be sent, a failure waits for
// the attempts still in flight, and a budget bounds the extra load.
//
// failsafe-go's hedge policy sends up to MaxHedges copies (1 by default),
// each after a fixed delay or one a function computes, runs every attempt
// on a goroutine of its own with a context of its own, and by default
// returns the first outcome, error or not, cancelling the rest (CancelIf
// and CancelOn narrow which outcomes do; an outcome that does not, even
// before the delay, lets the next hedge go when the delay ends). It has no
// percentile delay of its own, and a hedge starts at once: there is no
// readiness to wait for. Final plays CancelIf's part, with the opposite
// default (only a success ends the request), and a failure with no other
// attempt in flight is the outcome at once.
//
// Each hedge's context carries its number: the work reads it with
// troupe.AttemptFrom (Hedge: 1 for the first hedge; the original carries
// nothing, and reads 0).
//
// A Hedge is safe for concurrent use.
package hedge
