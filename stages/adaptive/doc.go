// Package adaptive is an adaptive concurrency limit as a troupe stage: at
// most as many requests in flight below it as its current limit, a limit
// that moves between a min and a max with the latency and the errors it
// measures. It finds, and keeps to, the concurrency the service inside
// handles without queueing, and backs off when that service fails.
//
// # Readiness
//
// Readiness is a reservation against the current limit, exactly as with a
// fixed limit (package limit): a caller is admitted only while the calls in
// flight plus the permits reserved are below the limit; the others wait in
// the stage's line, first come first served, so backpressure travels
// upstream (a LoadShed outside sheds). The stage's mailbox has room for the
// max, and the stage itself holds the slots above the current limit: when
// the limit grows it frees some (the first callers in line get them); when
// it shrinks it takes free ones back, and otherwise keeps the slots of the
// calls that end, instead of handing them to the line, until the calls in
// flight plus those reserved are within the new limit. Requests reserved
// before a decrease wait in the stage, holding their permits, until the
// calls in flight are below the limit: no request is handed on while the
// calls in flight below are at the limit in effect. A permit is held until
// the call's outcome is delivered, or until the call is abandoned.
//
// # The algorithm
//
// The stage measures each call it hands on, from then to its outcome. A
// success is a latency sample; an error whose caller cancelled the call
// counts for nothing (neither do calls that never ran); any other error is
// a drop, a sign of overload, unless Classify says it is not (then it is a
// sample). A Timeout inside the limit makes slow calls drops.
//
// Only the calls handed on under the current limit move it: each change of
// the limit starts a new epoch, and the outcomes of calls sent before are
// not held against the new limit.
//
//   - A drop cuts the limit at once, multiplicatively: limit * Backoff,
//     and at least one less, never below the min (the "multiplicative
//     decrease" of AIMD). The calls sent before the cut do not cut it again.
//   - Latency samples fill a window, which closes after max(Samples, limit)
//     samples, about one round of the calls in flight. Its mean latency is
//     compared with the baseline, the latency without a queue, to estimate
//     the calls that wait at the service inside, as TCP Vegas does:
//     q = limit * (1 - baseline/mean). Below alpha = 3*log10(limit) (at
//     least 1), the limit grows by log10(limit) (at least 1), if the window
//     used at least half of it; above beta = 6*log10(limit) (at least 2), it
//     shrinks by half of q - beta (at least log10(limit) and 1, at most a
//     quarter of the limit); in between it holds.
//   - The baseline is measured by a probe: a window at the min limit. The
//     stage starts with one, then moves to the initial limit; any window
//     faster than the baseline lowers it, and one within 10 % of it
//     confirms it. A baseline no window has confirmed for ProbeEvery is
//     measured again by a probe, which then returns to the limit it left.
//
// Against a service whose latency is flat up to K calls in flight and rises
// steeply beyond, the limit settles at K or K+1; after an outage (every
// call fails) the cuts take it to the min, and it climbs back by one per
// window to K; during a latency spike it shrinks, and it grows back after.
//
// Why Vegas rather than a gradient (Netflix's Gradient2): a knee is
// queueing, latency above the no-load latency, and Vegas measures exactly
// that against the baseline. A gradient compares the recent latency with a
// long-term average that follows a sustained increase, and tolerates an
// increase (by 50 % by default) before it reacts, so it settles past the
// knee and drifts while overloaded. Vegas's weakness, a baseline learned
// under load, is what the probes are for: the baseline is always measured
// at the min limit, where there is no queue to see (choose a min the
// service inside handles without queueing).
//
// # Parameters and defaults
//
//	Limits(min, max)  DefaultMin (1), DefaultMax (200); max at most MaxLimit
//	Initial(n)        DefaultInitial (20), taken into [min, max]
//	Backoff(ratio)    DefaultBackoff (0.9), strictly between 0 and 1
//	Samples(n)        DefaultSamples (10)
//	ProbeEvery(d)     DefaultProbe (10s)
//	Classify(f)       every error is a drop
//	OnLimitChange(f)  none
//
// A bad option is an error at construction matching troupe.ErrBadConfig.
//
// # Observing the limit
//
// Limit returns the current limit; Available, the permits callers can still
// reserve; Snapshot (also Stats' Detail), the limit, its bounds, the calls
// in flight, the baseline and the last window's latency, whether a probe
// runs, and the cuts. Stats reports the max as Capacity and counts the
// slots held above the limit as Used. OnLimitChange is told of every change,
// in order, never concurrently: of an increase before any call is admitted
// under it, of a decrease just after it took effect.
//
// # Compared with Netflix concurrency-limits and failsafe-go
//
// Netflix's limiters (Vegas, Gradient2, AIMD) update the limit on every
// sample, and a caller above the limit is rejected (or blocks, with its
// BlockingLimiter). Its Vegas takes the smallest sample as the no-load
// latency and resets it now and then. failsafe-go's adaptive limiter
// compares a recent latency quantile (p90 over a window of 1 to 30 seconds
// and at least 50 samples) with a slowly moving baseline, with Vegas-style
// thresholds like these, watches whether a larger limit brought more
// throughput or only more latency, caps the limit at a multiple of the calls
// in flight, and rejects calls above the limit unless queueing is enabled.
// Both default to limits of 1 to 200 starting at 20, as this stage does.
// Here, the limit is the readiness of a stage: callers above it wait in
// line (a LoadShed outside turns that into rejection); windows count only
// the calls sent under the current limit; the baseline is measured by
// probes at the min; and the caller's own cancellation is never taken for
// overload.
//
// # What to know
//
// A call whose outcome a stage inside forces while its work goes on (a
// Timeout in its Abandon mode) gives its permit back when that outcome
// passes: the abandoned work is then bounded by that Timeout's own
// capacity, not by this limit.
//
// An Adaptive is safe for concurrent use; Classify and OnLimitChange
// functions run on the goroutines of the calls whose outcomes they judge or
// report, and must be safe for concurrent use and must not block.
package adaptive
