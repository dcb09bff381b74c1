// Package troupehttp joins troupe and net/http in both directions: a leaf
// service over an *http.Client, so a troupe stack can send HTTP requests,
// and an http.RoundTripper over any troupe stack, so the stack can sit
// inside an http.Client; with the helpers that make retries of HTTP
// requests correct.
//
//	leaf := troupehttp.Client(http.DefaultClient)
//	stack, err := stages.Stack[*http.Request, *http.Response]().
//		Limit(16).
//		Timeout(5 * time.Second).
//		Layer(troupehttp.Retry(3, bo)).
//		Build(sys, leaf)
//	hc := &http.Client{Transport: troupehttp.Transport(stack)}
//	resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
//
// # Errors and statuses
//
// A transport error is an error; every HTTP response is a response, whatever
// its status: whether a 503 deserves another attempt is the retry policy's
// decision, not the leaf's. Retryable (and RetryOn for other statuses) is the
// predicate for retry.Attempts: it retries errors (but not a cancelled
// context) and responses of status 429, 500, 502, 503 and 504, and not other
// 4xx. An error of a call whose context had ended (the caller gave up, or
// a Timeout outside the retry stage expired it) matches ErrCallEnded and is
// not retried: a Timeout outside Retry bounds the whole session, one inside
// gives each attempt its own deadline and its error is retried. RetryPolicy
// is retry.Attempts with that predicate and CloneRequest, as a Policy that
// also honours a retried response's Retry-After header: the wait before the
// retry is the longer of the backoff's and the header's, and a response that
// asks for more than MaxRetryAfter (a minute by default) goes to the caller
// instead of being retried. RetryAfter reads the header.
//
// # Response bodies: who owns them
//
// A response body belongs to whoever holds the outcome, and the last holder
// must close it: at the top, the caller of Do. A retry stage drops the
// outcome of every retried attempt, and nobody would close a dropped body:
// its connection would stay busy (a transport goroutine with it) until the
// request's context ended. So a status is retried only when dropping the
// response costs nothing: the Client leaf reads the bodies of the retryable
// statuses into memory (up to HoldLimit, 64 KiB by default) and closes the
// network body before returning (HoldBody); the connection goes back to the
// idle pool, the response holds no resource, and if no attempt follows (the
// attempts or the retry budget are spent) the caller still reads the whole
// body. A body over the limit is not held, and its response is not retried:
// it goes to the caller with its connection, unread. The policy never
// closes a body itself, so it never hands the caller a closed one, and it
// never needs to know whether the retry stage will really retry.
//
// # Requests: replaying bodies
//
// The retry stage copies a request before each send (retry.Policy's
// CloneRequest). CloneRequest copies a request without a body, or with a
// body and GetBody (set by http.NewRequest for bytes and strings readers),
// and refuses one whose body can be read only once: such a request is sent
// once and its outcome, a 503 included, goes to the caller. Replayable makes
// any request replayable up front by reading its body into memory, up to a
// limit (ErrBodyTooLarge beyond it).
//
// # Contexts
//
// The leaf sends each request with the context the stages hand down (a
// Timeout stage derives one per call), not the request's own; Transport
// reserves and calls the stack with the request's context, so the
// http.Client's caller bounds the whole stack. A Timeout stage's error
// reaches the http.Client's caller as a *url.Error that matches
// timeout.ErrTimeout with errors.Is.
//
// Every exported type and function documents whether it is safe for
// concurrent use: the services and the RoundTripper are.
package troupehttp
