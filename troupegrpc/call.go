package troupegrpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/troupe-go/troupe/actors"
)

// Kind is the kind of a gRPC call. A plain value, safe for concurrent use.
type Kind uint8

// The kinds of call.
const (
	Unary        Kind = iota // one request, one response
	ClientStream             // a stream of requests, one response
	ServerStream             // one request, a stream of responses
	BidiStream               // streams both ways
)

var kindNames = [...]string{
	Unary:        "unary",
	ClientStream: "client-stream",
	ServerStream: "server-stream",
	BidiStream:   "bidi-stream",
}

// String returns "unary", "client-stream", "server-stream" or
// "bidi-stream".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// kindOf returns the kind of a stream described by desc.
func kindOf(desc *grpc.StreamDesc) Kind {
	switch {
	case desc.ClientStreams && desc.ServerStreams:
		return BidiStream
	case desc.ClientStreams:
		return ClientStream
	case desc.ServerStreams:
		return ServerStream
	}
	return Unary
}

// Call is one outgoing gRPC call on its way through a stack: the request
// type of a client stack (see UnaryClientInterceptor). The interceptors
// make it; the Invoke leaf sends it. What it says never changes once made,
// and every attempt of a retry or hedge stage sends the same value: the
// attempts of one call share it, to know which of them answered the call
// (see the package doc). It is safe for concurrent use; a stage must not
// copy it. Its methods read it; a nil *Call answers zero values.
type Call struct {
	method string
	kind   Kind
	cc     *grpc.ClientConn
	opts   []grpc.CallOption // the caller's, less those that receive values
	header bool              // the caller asked for the header (grpc.Header)
	peer   bool              // the caller asked for the peer (grpc.Peer)

	// A unary call's: set when made, then read-only. The caller's reply
	// itself is not here: no attempt may touch it.
	req     any
	reply   msgType // the type of the caller's reply
	invoker grpc.UnaryInvoker

	st *stream // a stream call's shared state

	fl flight // what the call's attempts share
}

// Method returns the call's full method name, "/package.Service/Method".
func (c *Call) Method() string {
	if c == nil {
		return ""
	}
	return c.method
}

// Kind returns the call's kind.
func (c *Call) Kind() Kind {
	if c == nil {
		return Unary
	}
	return c.kind
}

// Request returns a unary call's request message; nil for a stream, whose
// messages are sent by its caller through the stream.
func (c *Call) Request() any {
	if c == nil {
		return nil
	}
	return c.req
}

// Result is the outcome of one attempt of a call, beside its error: the
// response type of a client stack. A retry policy reads the trailer (the
// server's pushback); the unary interceptor hands the caller the reply and
// the metadata of the attempt whose outcome the stack returns. A plain
// value: safe for concurrent use once made.
type Result struct {
	// Reply is a unary attempt's response message (nil for a stream): a
	// message of its own per attempt, copied into the caller's at the end.
	Reply any
	// Header is a unary attempt's header, when the caller asked for it
	// with grpc.Header.
	Header metadata.MD
	// Trailer is a unary attempt's trailer, or a stream attempt's when it
	// failed before its first response message: where a server's pushback
	// is (ServerPushback).
	Trailer metadata.MD
	// Peer is the server a unary attempt went to, when the caller asked for
	// it with grpc.Peer.
	Peer *peer.Peer
}

// Invoke returns the leaf service that sends each call it is given: a
// unary call with the invoker gRPC handed the interceptor, a stream call by
// opening a stream for it (see the package doc). Like every actors.Func, a
// call runs on the goroutine of the caller that made it, and honours the
// context the stages hand down: its deadline is the call's gRPC deadline.
// A stream's attempt lasts as long as the stream, so that it holds its
// permits for the stream's whole life. A call made through Conn has no
// invoker to send with: under Conn, and in each endpoint of a balancer, the
// leaf is InvokeOn, which sends on a connection of its own.
//
// The service is safe for concurrent use.
func Invoke() *actors.FuncService[*Call, Result] {
	return actors.Func(invoke, "troupegrpc.Invoke")
}

func invoke(ctx context.Context, c *Call) (Result, error) { return sendOn(ctx, c, nil) }

// sendOn is the work of the Invoke leaf (on nil: with the invoker or
// streamer the interceptor was handed) and of InvokeOn's (on its
// connection, on).
func sendOn(ctx context.Context, c *Call, on grpc.ClientConnInterface) (Result, error) {
	switch {
	case c == nil:
		return Result{}, ErrNilCall
	case c.st != nil:
		if on == nil && c.st.streamer == nil {
			return Result{}, ErrNoConn
		}
		return c.st.attempt(ctx, c, on)
	case on == nil && c.invoker == nil:
		return Result{}, ErrNoConn
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &unaryAttempt{cancel: cancel}
	if res, err, ok := c.fl.enter(a); !ok {
		return res, err
	}
	res := Result{Reply: c.reply.fresh()}
	opts := make([]grpc.CallOption, len(c.opts), len(c.opts)+3)
	copy(opts, c.opts)
	opts = append(opts, grpc.Trailer(&res.Trailer))
	if c.header {
		opts = append(opts, grpc.Header(&res.Header))
	}
	if c.peer {
		res.Peer = new(peer.Peer)
		opts = append(opts, grpc.Peer(res.Peer))
	}
	var err error
	if on != nil {
		err = on.Invoke(actx, c.method, c.req, res.Reply, opts...)
	} else {
		err = c.invoker(actx, c.method, c.req, res.Reply, c.cc, opts...)
	}
	return c.fl.leave(a, res, ended(ctx, err))
}

// ended marks err as the error of an attempt whose context had ended, if
// it had (see ErrCallEnded). NOTE: RetryOn relies on the mark to stop a
// retry stage from sending an attempt nobody would run (policy.go).
func ended(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return &endedError{err: err}
	}
	return err
}
