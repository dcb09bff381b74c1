// Package troupehttp joins troupe and net/http in both directions: leaf
// services that send HTTP requests (Send, over an http.RoundTripper, and
// Client, over an *http.Client), so a troupe stack can send them, and an
// http.RoundTripper over any troupe stack (Transport), so the stack can sit
// inside an http.Client or an httputil.ReverseProxy; with the helpers that
// make retries of HTTP requests correct and a proxy's errors statuses. On
// the server side, Handler puts an http.Handler behind any admission stack
// over the Serve leaf (see Handler).
//
//	stack, err := stages.Stack[*http.Request, *http.Response]().
//		Limit(64).
//		Timeout(5 * time.Second).
//		Layer(troupehttp.Retry(3, bo)).
//		Build(sys, troupehttp.Send(http.DefaultTransport))
//	hc := &http.Client{Transport: troupehttp.Transport(stack)}
//	proxy := &httputil.ReverseProxy{Rewrite: rewrite,
//		Transport: troupehttp.Transport(stack), ErrorHandler: troupehttp.ErrorHandler}
//
// # Which leaf
//
// Send sends with an http.RoundTripper: every response comes back as the
// server sent it, a redirect included, and a server's request forwarded by
// ReverseProxy (RequestURI set) is taken as net/http's Transport takes it.
// It is the leaf of a stack inside a Transport, which must not follow
// redirects (the RoundTripper contract; the http.Client around it does).
// Client sends with an *http.Client, for a stack used on its own that
// should follow redirects and keep cookies as that client does; it clears a
// forwarded request's RequestURI on the copy it sends, since http.Client
// refuses one.
//
// # Errors and statuses
//
// A transport error is an error; every HTTP response is a response, whatever
// its status: whether a 503 deserves another attempt is the retry policy's
// decision, not the leaf's. The leaves mark with troupe.Permanent the errors
// no retry can cure (a certificate not trusted, a server that does not speak
// TLS, a refused redirect, a request no client can send: an unsupported
// scheme, no host, an invalid method or header). Retryable (and RetryOn for
// other statuses) is the predicate for retry.Attempts: it retries errors but
// a cancelled context, a permanent error and a panic, and exactly the
// responses of status 429, 500, 502, 503 and 504. An error of a call whose
// context had ended (the caller gave up, or a Timeout outside the retry
// stage expired it) matches ErrCallEnded and is not retried: a Timeout
// outside Retry bounds the whole session, one inside gives each attempt its
// own deadline and its error is retried. RetryPolicy is retry.Attempts with
// that predicate and CloneRequest, as a Policy that retries only what is
// safe, by net/http's own rule: a request IsIdempotent accepts (GET, HEAD,
// OPTIONS, TRACE, or an Idempotency-Key header) after any of those
// outcomes, any other only after an error that shows it never left
// (NotSent: a dial error, a shed), never after it may have been written (a
// reset, a timeout, a 503); Policy.Idempotent widens the rule. It also
// honours a retried response's Retry-After header: the wait before the
// retry is the longer of the backoff's and the header's, and a response
// that asks for more than MaxRetryAfter (a minute by default) goes to the
// caller instead of being retried. RetryAfter reads the header.
//
// For a proxy, ErrorHandler answers the stack's errors with the status a
// client expects (StatusOf: a timeout 504, a shed request or an open
// breaker 503 with Retry-After, a refused rate 429, retries spent 502), and
// IsFailure is the breaker's classifier for responses (a 5xx and a
// transport error are failures, the caller's own cancellation neither).
//
// # Response bodies: who owns them, and how long they hold the stages
//
// A response body belongs to whoever holds the outcome, and the last holder
// must close it: at the top, the caller of Do. A retry stage drops the
// outcome of every retried attempt, and nobody would close a dropped body:
// its connection would stay busy (a transport goroutine with it) until the
// request's context ended. So a status is retried only when dropping the
// response costs nothing: the leaf reads the bodies of the retryable
// statuses into memory (up to HoldLimit, 64 KiB by default) and closes the
// network body before returning (HoldBody); the connection goes back to the
// idle pool, the response holds no resource, and if no attempt follows (the
// attempts or the retry budget are spent) the caller still reads the whole
// body. A body over the limit is not held, and its response is not retried:
// it goes to the caller with its connection, unread. The policy never
// closes a body itself, so it never hands the caller a closed one, and it
// never needs to know whether the retry stage will really retry.
//
// Any other body streams from the connection as it arrives, after the call
// has returned, through any stack: server-sent events, a chunked or HTTP/2
// body, trailers, a 101's connection. Read to its end it leaves its
// connection in the pool. The stages' permits go back, by default, when the
// outcome (the headers) passes them, as in tower; with the Transport option
// HoldUntilBodyClosed, a concurrency limit's and an adaptive limit's go
// back when the body is closed or read to its end, so that a gateway's
// limit counts the responses still streaming.
//
// # Requests: replaying bodies
//
// The retry stage copies a request before each send (retry.Policy's
// CloneRequest). CloneRequest copies a request without a body, or with a
// body and GetBody (set by http.NewRequest for bytes and strings readers),
// and refuses one whose body can be read only once: such a request is sent
// once and its outcome, a 503 included, goes to the caller. A server's
// request body (what ReverseProxy forwards) is such a body. Replayable makes
// any request replayable up front by reading its body into memory, up to a
// limit (ErrBodyTooLarge beyond it); a proxy does it in its Rewrite for the
// requests it wants retried.
//
// # Balancing over replicas
//
// A balancer (package balance) whose endpoints are base URLs spreads the
// requests over the replicas of one API. Each endpoint is a supervised
// pipeline of its own (balance.Pipelines: a limit, a breaker, a timeout per
// replica) over a Send leaf with BaseURL, which sends a copy of each
// request to its replica's base URL, the caller's request never changed;
// the stack outside the balancer goes in a Transport, for an http.Client
// or a ReverseProxy, whose requests name the API's logical URL:
//
//	replica := func(base string) supervisor.Build[*http.Request, *http.Response] {
//		return func(h troupe.Host) (troupe.Service[*http.Request, *http.Response], error) {
//			return stages.Stack[*http.Request, *http.Response]().Limit(32).
//				Build(h, troupehttp.Send(tr, troupehttp.BaseURL(base)))
//		}
//	}
//	bal, err := balance.New(balance.Poll(10*time.Second, resolve, balance.Pipelines(sys, replica)))
//	stack, err := stages.Stack[*http.Request, *http.Response]().
//		Timeout(5 * time.Second).Layer(troupehttp.Retry(2, bo)).Build(sys, bal)
//	hc := &http.Client{Transport: troupehttp.Transport(stack)} // hc.Get("http://inventory/items/7")
//	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(inventory) },
//		Transport: troupehttp.Transport(stack), ErrorHandler: troupehttp.ErrorHandler}
//
// Each replica gets its own host in the Host header, unless the request
// sets another (see BaseURL). A Retry outside the balancer copies the
// request for each attempt (CloneRequest), and the balancer sends an
// attempt after one that failed to another replica: an endpoint whose last
// call failed loses every pair for a cooldown (balance.FailureCooldown). A
// failure, to the balancer, is by default an error: a transport error (a
// replica down), or the error of a stage inside the endpoint, such as a
// Timeout there that a slow replica outlasts (a Timeout outside the
// balancer expires the attempt's context, which it does not count, as it
// does not count a caller's giving up). A 503 is a response, which it does
// not count unless told to: balance.Classify(IsFailure) makes a 5xx a
// failure of the replica, so a retry of a 503 goes to another replica. A
// Breaker per endpoint that counts it (breaker.Classify with IsFailure)
// goes further: it opens, refuses the next call at once, and the balancer
// leaves the replica out until the breaker lets calls through again. A removed
// replica's calls in flight finish, and their bodies stream on after its
// pipeline is closed.
//
// # Contexts
//
// The leaf sends each request with the context the stages hand down (a
// Timeout stage derives one per call), not the request's own, keeping its
// values (an httptrace.ClientTrace still reaches the RoundTripper);
// Transport calls the stack with the request's context, so the
// http.Client's caller bounds the whole stack, and a caller that cancels
// mid-body cancels the backend's request. A Timeout stage's error reaches
// the http.Client's caller as a *url.Error that matches timeout.ErrTimeout
// with errors.Is.
//
// Every exported type and function documents whether it is safe for
// concurrent use: the services and the RoundTripper are.
package troupehttp
