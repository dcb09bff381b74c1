// Package balance is tower's power-of-two-choices balancer over a set of
// endpoint services: of the endpoints ready, two are drawn at random and
// the request goes to the less loaded of the two.
//
//	src := balance.Poll(10*time.Second, resolve, balance.Pipelines(sys,
//		func(addr string) supervisor.Build[Req, Res] { ... }))  // a pipeline per endpoint
//	bal, err := balance.New(src)
//	svc, err := stages.Stack[Req, Res]().Retry(2, nil).Build(sys, bal)
//
// # Readiness
//
// The balancer keeps a ready cache, as tower's ReadyCache: for each
// endpoint it holds at most one permit, reserved on the endpoint in
// advance, and an endpoint is ready when the balancer holds its permit.
// Reserve picks among the ready endpoints and hands the caller a permit
// that holds a reservation on the picked endpoint: a unit reserved on it
// then, on the caller's goroutine, when it has one free (troupe's stages
// take a free unit even for a context already done, and a FuncService is
// always ready, as is a stack with no stages over one), so that the endpoint keeps its ready permit; otherwise
// the ready permit itself, and the balancer reserves on that endpoint
// again on the endpoint's watcher, a goroutine that waits in the
// endpoint's Reserve for as long as it takes (a full limit). A Reserve on
// an endpoint that fails is tried again after a backoff (WithBackoff).
//
// So the balancer is ready when any endpoint is. With none ready, or none
// at all, Reserve waits (as tower's does) for the first endpoint that
// becomes ready, the waiting Reserves served first come first, and gives
// up when its context ends with an error matching ErrNoneReady and the
// context's error.
//
// Some endpoints are not ready in a way their Reserve cannot show: an
// open breaker reserves at once and refuses the call made with the
// permit (see package breaker), a load shedder the same. A call whose
// error is such a refusal (Refused; by default breaker.ErrOpen and
// loadshed.ErrOverloaded) takes the endpoint out of the ready set until
// the time the error says (a *breaker.OpenError's RetryAt), or for the
// backoff's next delay; then it is picked again, and the breaker's trial
// calls go.
//
// # Load
//
// The cost of an endpoint is tower's PeakEwma (the default) or
// PendingRequests. Under PeakEWMA the cost is an estimate of the round
// trip times one more than the calls in flight. A round trip above the
// estimate replaces it at once; one below it pulls it towards itself by
// 1-exp(-elapsed/decay), elapsed being the time since the estimate last
// changed; with no round trip seen the estimate decays towards zero, so
// an endpoint idle for long is tried again. A pick's reading of the
// estimate decays it, as tower's does. A fresh endpoint starts at
// DefaultRTT. Every call's round trip counts, a failed one's too, except
// a call whose own caller gave up (its context ended and the outcome is
// that context's error).
//
// A failing endpoint answers fast, which would make it look the least
// loaded. So an endpoint whose last call failed loses every pair, for the
// cooldown (FailureCooldown), to one whose last call did not: a Retry
// outside the balancer sends its retry to another endpoint whenever
// another one is ready, and the failing endpoint is tried once more each
// cooldown. A hedge outside goes to another endpoint too: the endpoint
// of the attempt still in flight counts it in its load.
//
// A failure is, by default, a call that returned an error. Classify says
// which outcomes are failures instead, typed by the balancer's response:
// with balance.Classify(troupehttp.IsFailure), an HTTP replica answering
// 503 is in its cooldown after each 503, and a Retry outside sends the
// retry elsewhere, where by default it may go back to the replica.
//
// # Discovery and draining
//
// Endpoints come from a Source (a Channel of changes, or a function Poll
// asks for the keys) and from Insert and Remove. Pipelines makes each
// endpoint a supervised pipeline of its own (its own limit, breaker,
// reconnect, restarted by its own supervisor). A removed endpoint is
// picked no more and its ready permit is given back at once; its calls in
// flight, and permits already handed out, finish; then, if the balancer
// made it (Poll, a Change marked Owned), it is closed. Close removes every
// endpoint so and waits for the drains.
//
// # Design
//
// The balancer's state (the set, the ready set, the waiting Reserves, the
// loads) is guarded by one mutex, held only for a pick or a change of
// state, never across a call into an endpoint. A call takes it twice: for
// the pick and for the outcome. Loads and cooldowns are kept on the
// monotonic clock, read as the time since the balancer was made, which
// costs less than time.Now. The balancer over three idle endpoints is
// compared with one endpoint alone in BenchmarkBalancerVersusPipeline. The alternative the
// runtime's stages use, one actor owning the state, would add a hop to
// every pick.
//
// # Observing
//
// Stats gives each endpoint's view: ready, paused, failing, its calls in
// flight, its round-trip estimate and cost, its picks and errors; Stages
// gives the same as one troupe.Stats an endpoint (its Snapshot as
// Detail), so that troupehttp.Dashboard shows a balancer registered with
// it, an endpoint a card. The Observe option attaches a troupe.Observer: it is told of each pick
// (troupe.EventPicked, with the call's context) and of each endpoint
// added, removed and drained (EventEndpointAdded, EventEndpointRemoved,
// EventEndpointDrained), each event naming the endpoint by its key in
// Event.Endpoint; troupeotel makes them metrics per endpoint, and a pick
// an event on the caller's span. With no
// observer a pick pays one nil check; an endpoint's name is formatted
// once, when it is inserted, so that a pick reported allocates nothing.
//
// A Balancer is safe for concurrent use.
package balance
