// Package stages builds stacks of troupe's stages with the request and
// response types named once:
//
//	svc, err := stages.Stack[int, string]().
//		Limit(20).                                           // outermost
//		Timeout(10 * time.Second).
//		Retry(3, bo).
//		RateLimit(ratelimit.Rate{Num: 5, Per: time.Second}). // innermost
//		Build(sys, api)
//
// Each stage lives in a package of its own below this one (limit, timeout,
// retry, ratelimit, loadshed, buffer, filter, spawnready, reconnect), with
// its options, errors and documentation; Builder.Layer adds any other
// layer of the same types.
package stages
