// Package troupegrpc runs gRPC calls through troupe stacks, on both sides:
// client interceptors that send every call, unary or streaming, through
// any stack (limit, timeout, retry, hedge, rate limit, breaker...), and
// server interceptors that use a stack as admission control; and, for a
// balancer over several backends, the leaf that sends on a connection of
// its own (InvokeOn) and a client connection over a stack (Conn).
//
//	stack, err := stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
//		Limit(20).
//		Timeout(10 * time.Second).
//		Layer(troupegrpc.Retry(3, bo)).
//		RateLimit(ratelimit.Rate{Num: 5, Per: time.Second}).
//		Build(sys, troupegrpc.Invoke())
//	conn, err := grpc.NewClient(target, creds,
//		grpc.WithUnaryInterceptor(troupegrpc.UnaryClientInterceptor(stack)),
//		grpc.WithStreamInterceptor(troupegrpc.StreamClientInterceptor(stack)))
//
// # Calls, attempts and streams
//
// A client stack's requests are *Call values and its responses Result
// values; its leaf is Invoke, which sends each attempt the stages make.
// A unary attempt receives into a message of its own, so hedged attempts
// never share one; the caller's reply, and its grpc.Header, grpc.Trailer
// and grpc.Peer options, get the attempt whose outcome the stack returns.
// The unary interceptor returns once every attempt of the call has ended:
// those the stack abandoned (a hedge that lost, a timed-out attempt) are
// cancelled and waited for, and an attempt a stage sends after that is
// never sent, so no attempt reads the caller's request, or touches its
// reply, once the call has returned.
//
// A stream's call lasts as long as the stream: it holds its permits (a
// concurrency limit's, a hedge's slot) until the stream ends, so a limit
// counts open streams, and a Timeout bounds the whole stream. The stream
// is retried or hedged only before it is committed to one attempt, which
// happens, as gRPC commits its own retries, when an attempt receives the
// response header, or the first response message (or the end of the
// stream); or when the messages the caller has sent pass ReplayLimit (or
// one of them is not a protocol buffer, which cannot be copied). An
// attempt that fails before any header (a server that answers with a
// status alone) is retried, even when the caller is waiting in Header,
// which returns the header of the attempt the stream commits to. Before
// that, every message the caller sends is kept, as a copy, and sent to
// each attempt as it joins, before anything sent later, followed by
// CloseSend if the caller called it; the caller's SendMsg returns nil
// even when an attempt's stream has failed, since its failure is the
// attempt's outcome, for the stack's policy to judge. Hedged attempts race
// for the header: the first to receive one wins and the others are
// cancelled. A committed stream ends with the status of the attempt it is
// committed to, as gRPC gave it. A stream that is never read from (neither
// RecvMsg until an error, nor its context cancelled) holds its permits and
// a goroutine, as gRPC holds its own.
//
// # Status codes and retries
//
// RetryPolicy (and Retry, the layer) retries UNAVAILABLE and
// RESOURCE_EXHAUSTED (RetryOn for other codes), never an attempt whose
// context ended (ErrCallEnded) nor a committed stream's (ErrCommitted),
// nor a panic (troupe.ErrPanic: a bug, not a failure) or an error marked
// permanent (troupe.Permanent), and honours a server's pushback
// (PushbackKey in the trailer; see ServerPushback): it waits at least as
// long as the server asks, and not at all past MaxPushback or when the
// server asks it not to. The stack's own errors reach the caller as an
// *Error with the code Code gives them: a timeout DEADLINE_EXCEEDED, a
// shed call RESOURCE_EXHAUSTED, an open breaker or a closed stack
// UNAVAILABLE; errors.Is still finds troupe's sentinels in them.
//
// The attempts of one call, whichever stages sent them, share what the
// server answered: an attempt that ends with any other code than
// UNAVAILABLE and RESOURCE_EXHAUSTED (or with an error marked permanent),
// its context still live, answers the call. The call's other attempts in
// flight are cancelled and end with that same status, and an attempt sent
// later fails with it at once, without reaching the server: a hedged call
// ends with the server's answer as soon as it comes, and no retry, above
// or below a hedge, runs again a call the server has answered (a retry
// policy's wait before a next attempt ends early, to end with it). A
// retry that RetryOn tells to retry that code all the same sends the call
// again.
//
// # Deadlines
//
// The stack is reserved and called with the caller's context, so the
// caller's deadline bounds the whole stack, and each attempt is sent with
// the context the stages hand down: a Timeout's deadline is the one the
// server sees. On the server, the incoming deadline bounds the wait for
// admission, and the handler runs with the stack's context.
//
// # Balancing over backends
//
// A balancer (package balance) whose endpoints are connections, one per
// backend, sends each attempt to the backend it picks. Endpoints makes the
// endpoints, for balance.Poll or a discovery channel: for each address it
// dials a connection and builds a supervised pipeline of its own (a limit,
// a breaker, a timeout per backend) over InvokeOn, the leaf that sends on
// that connection instead of with the interceptor's invoker. Conn is the
// client side: a grpc.ClientConnInterface over the stack outside the
// balancer, which generated clients take as they take a
// *grpc.ClientConn:
//
//	dial := func(addr string) (*grpc.ClientConn, error) { return grpc.NewClient(addr, creds) }
//	bal, err := balance.New(balance.Poll(10*time.Second, resolve, troupegrpc.Endpoints(sys, dial, perBackend)))
//	stack, err := stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
//		Timeout(5 * time.Second).Layer(troupegrpc.Retry(2, bo)).Build(sys, bal)
//	client := pb.NewInventoryClient(troupegrpc.Conn(stack))
//
// Unary calls and streams both go through it, each attempt to one
// endpoint; a stream holds its endpoint, counted in its load, for its whole
// life. A Retry outside the balancer sends an attempt after one that
// failed to another backend: an endpoint whose last call failed (with
// UNAVAILABLE, say, or the error of a stage inside the endpoint) loses
// every pair for a cooldown (balance.FailureCooldown), and a hedge outside
// goes to another endpoint too. A slow backend fails an attempt only
// through a Timeout inside its endpoint, whose DEADLINE_EXCEEDED the
// balancer counts against it (a Policy with RetryOn(codes.Unavailable,
// codes.ResourceExhausted, codes.DeadlineExceeded) retries it); a Timeout
// outside the balancer expires the attempt's context, which the balancer
// does not count, as it does not count a caller's giving up. A removed
// endpoint's calls in flight finish; then the balancer closes its pipeline
// and its connection.
//
// # Admission control
//
// A server stack's requests are *ServerCall values, its leaf Handle. A
// load shedder in front of a limit, a rate limit or an adaptive limit
// turns excess calls away at once: UnaryServerInterceptor and
// StreamServerInterceptor answer them RESOURCE_EXHAUSTED, or UNAVAILABLE
// for an open breaker or a closed stack, with a pushback (WithPushback)
// that this package's clients honour (and gRPC's own retries, where
// configured).
//
// Every exported function and type documents whether it is safe for
// concurrent use: the interceptors and leaves are.
package troupegrpc
