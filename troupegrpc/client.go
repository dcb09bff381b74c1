package troupegrpc

import (
	"context"
	"fmt"

	"google.golang.org/grpc"

	"github.com/troupe-go/troupe"
)

// DefaultReplayLimit is how many bytes of a stream's sent messages are kept
// for replay by default (see ReplayLimit): 256 KiB, gRPC's own default for
// its retries.
const DefaultReplayLimit = 256 << 10

// ClientOption configures a client interceptor. An option is a function
// value with no state of its own: it is safe for concurrent use.
type ClientOption func(*clientConfig)

// clientConfig is an interceptor's configuration; set when it is made,
// then read-only.
type clientConfig struct {
	replayLimit int
	bad         error // a bad option's error: every call fails with it
}

// ReplayLimit sets how many bytes of the messages a stream's caller sent
// are kept to be sent again to a later attempt (DefaultReplayLimit by
// default). A stream whose messages go past it is committed to its
// current attempt, or to the next if none is under way: it is not retried
// or hedged after that. The unary interceptor has no use for it. A
// negative n is a configuration error.
func ReplayLimit(n int) ClientOption {
	return func(c *clientConfig) {
		if n < 0 && c.bad == nil {
			c.bad = &troupe.ConfigError{Stage: "troupegrpc", Option: "ReplayLimit", Value: n, Why: "must not be negative"}
		}
		c.replayLimit = n
	}
}

// newClientConfig applies opts. A bad option (a nil one, a negative
// ReplayLimit) is the error of every call through the interceptor, as a
// nil service is: it matches troupe.ErrBadConfig (an interceptor has no
// error of its own to return).
func newClientConfig(opts []ClientOption) clientConfig {
	c := clientConfig{replayLimit: DefaultReplayLimit}
	for i, o := range opts {
		if o == nil {
			c.bad = nilOption(i, len(opts))
			break
		}
		o(&c)
	}
	return c
}

// nilOption is the error for the i-th of n options being nil.
func nilOption(i, n int) error {
	return &troupe.ConfigError{Stage: "troupegrpc interceptor", Option: fmt.Sprintf("option %d of %d", i+1, n), Why: "nil"}
}

// UnaryClientInterceptor returns an interceptor that sends every unary call
// through svc, any troupe stack over the Invoke leaf:
//
//	stack, err := stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
//		Limit(20).
//		Timeout(10 * time.Second).
//		Layer(troupegrpc.Retry(3, bo)).
//		Build(sys, troupegrpc.Invoke())
//	conn, err := grpc.NewClient(target, creds,
//		grpc.WithUnaryInterceptor(troupegrpc.UnaryClientInterceptor(stack)),
//		grpc.WithStreamInterceptor(troupegrpc.StreamClientInterceptor(stack)))
//
// The call reserves svc and calls it with the caller's context, so the
// caller's deadline bounds the whole stack and a Timeout's deadline is the
// one each attempt carries to the server. Each attempt receives into a
// reply message of its own; the caller's message gets the reply of the
// attempt whose outcome the stack returns, and so do the caller's
// grpc.Header, grpc.Trailer and grpc.Peer options, on an error too. The
// error is the stack's: a server's status as gRPC returned it (through a
// retry stage's *retry.ExhaustedError when its retries ran out), or, for
// an error of the stack's own, an *Error with the code Code gives it.
//
// The interceptor returns once every attempt of the call has ended: an
// attempt the stack abandoned is cancelled and waited for (gRPC honours a
// cancelled context at once; an interceptor below this one must too), and
// one a stage sends later is never sent. From then on no attempt touches
// req or reply.
//
// The interceptor is safe for concurrent use (troupe services are).
func UnaryClientInterceptor(svc troupe.Service[*Call, Result], opts ...ClientOption) grpc.UnaryClientInterceptor {
	cfg := newClientConfig(opts)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return unaryCall(ctx, svc, cfg, method, req, reply, cc, invoker, opts)
	}
}

// unaryCall sends a unary call through svc: the unary interceptor's work,
// and Conn's Invoke's (with no cc nor invoker: its leaf has a connection
// of its own).
func unaryCall(ctx context.Context, svc troupe.Service[*Call, Result], cfg clientConfig, method string, req, reply any,
	cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption) error {
	switch {
	case svc == nil:
		return toStatus(ErrNilService)
	case cfg.bad != nil:
		return toStatus(cfg.bad)
	}
	co := splitOpts(opts)
	c := &Call{
		method: method, kind: Unary, cc: cc, opts: co.rest,
		header: len(co.header) > 0, peer: len(co.peer) > 0,
		req: req, reply: typeOf(reply), invoker: invoker,
	}
	res, err := troupe.Do(ctx, svc, c)
	c.fl.close() // no attempt touches req from here on
	co.fill(res.Header, res.Trailer, res.Peer)
	if err != nil {
		return toStatus(err)
	}
	return toStatus(copyMsg(reply, res.Reply))
}
