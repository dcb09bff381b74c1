// Package stages builds stacks of troupe's stages with the request and
// response types named once: [Stack] returns a [Builder], the one builder
// users need.
//
//	svc, err := stages.Stack[int, string]().
//		Limit(20).                                           // outermost
//		Timeout(10 * time.Second).
//		Retry(3, bo).
//		RateLimit(ratelimit.Rate{Num: 5, Per: time.Second}). // innermost
//		Build(sys, api)
//
// Each of the 13 stages lives in a package of its own below this one, with
// its options, errors and documentation; 12 have a method on Builder:
//
//   - limit: a concurrency limit ([Builder.Limit]).
//   - adaptive: a concurrency limit that follows latency and errors
//     ([Builder.Adaptive]).
//   - timeout: a deadline from the call to its outcome ([Builder.Timeout]).
//   - retry: retries with backoff and budgets ([Builder.Retry], or
//     retry.Layer with a policy of your own).
//   - ratelimit: a fixed-window or smooth (GCRA) rate limit, local or
//     shared ([Builder.RateLimit]).
//   - loadshed: refuses what the inner service cannot take at once, by
//     priority ([Builder.LoadShed]).
//   - buffer: a bounded queue in front of a worker ([Builder.Buffer]).
//   - filter: a predicate, or a check that may block, that can reject a
//     request ([Builder.Filter], [Builder.AsyncFilter]).
//   - spawnready: waits for the inner service's readiness in the
//     background ([Builder.SpawnReady]).
//   - breaker: a circuit breaker ([Builder.Breaker]).
//   - hedge: sends a slow request again and takes the first success
//     ([Builder.Hedge]).
//   - fallback: answers a failed call with a value or another service
//     ([Builder.Fallback]).
//   - reconnect: the innermost service, a connection that reconnect.New
//     makes with a connector and makes again when it breaks: the inner
//     service [Builder.Build] takes.
//
// Beside them, three packages are not stages but services that wrap
// others:
//
//   - balance: a power-of-two-choices balancer over a set of endpoints
//     (each a supervised pipeline of its own with balance.Pipelines),
//     found by a discovery source, with a ready cache and peak-EWMA or
//     pending-requests load:
//     stages.Stack[Req, Res]().Retry(2, nil).Build(sys, balancer).
//   - steer: routes each request to one of N services by a function of
//     it; its readiness is the chosen service's (steer.Layer, with the
//     inner service as index 0).
//   - mapping: converts requests, responses or errors between the service
//     outside and the one inside, changing their types where needed, so a
//     stack over []byte can sit under a typed client (mapping.Request,
//     mapping.Response, mapping.Err, mapping.AndThen, and a layer of each
//     with the types kept).
//
// [Builder.Layer] adds any other layer of the same types (troupehttp's and
// troupegrpc's retry policies, redisquota's budget, a stage of your own),
// [Builder.Named] names the stage added last, and [Builder.Observe]
// attaches an observer to the stack's stages. [Builder.Build] spawns them.
package stages
