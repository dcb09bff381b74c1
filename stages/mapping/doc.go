// Package mapping is tower's util combinators MapRequest, MapResponse,
// MapErr and AndThen: services that wrap another and convert what passes
// between the caller and it. [Request] converts each request, [Response]
// each successful response, [Err] each error, and [AndThen] runs a
// function of the call's context on each successful response and returns
// its outcome.
//
// They may change the request or response type between the service
// outside and the one inside, so a stack over []byte can sit under a typed
// client:
//
//	wire, _ := stages.Stack[[]byte, []byte]().Retry(2, nil).Timeout(time.Second).Build(sys, transport)
//	enc, _ := mapping.Request(wire, func(_ context.Context, q Query) ([]byte, error) { return json.Marshal(q) })
//	client, _ := mapping.Response(enc, decodeAnswer) // troupe.Service[Query, Answer]
//	typed, _ := stages.Stack[Query, Answer]().Limit(8).Build(sys, client)
//
// A function that changes a type makes a service, not a troupe.Layer (a
// layer keeps its stack's types); [RequestLayer], [ResponseLayer],
// [ErrLayer] and [AndThenLayer] are the same combinators with the types
// kept, to add to a Builder.
//
//   - The readiness path passes through: Reserve reserves on the inner
//     service, and the permit it returns holds that reservation (calling
//     it calls the inner permit, releasing it releases that one). troupe.Do
//     reserves and calls in one step, through the inner service's own
//     one-step path where it has one: no permit is made for the wrapper.
//     Err maps the error of reserving on the inner service too, as tower's
//     MapErr maps poll_ready's.
//   - The functions run in the call, on the caller's goroutine; nothing is
//     spawned, and no goroutine waits for them. A request conversion that
//     fails is the call's outcome and the inner service is not called. The
//     error a function returns is the outcome as it is, not wrapped: mark
//     it with troupe.Permanent when no retry outside should try again.
//   - A panic in a function is that call's outcome, a *troupe.PanicError
//     naming the combinator ("mapping.Request", ...); nothing crashes.
//   - A combinator does not own its inner service: it has no Close, and a
//     stack closing leaves the service inside it alone, as Build does.
//
// The services and layers are safe for concurrent use when their functions
// are.
package mapping
