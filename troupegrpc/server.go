package troupegrpc

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/breaker"
)

// DefaultPushback is the pushback the server interceptors send with a
// refusal by default (see WithPushback).
const DefaultPushback = 100 * time.Millisecond

// ServerOption configures a server interceptor. An option is a function
// value with no state of its own: it is safe for concurrent use.
type ServerOption func(*serverConfig)

// serverConfig is a server interceptor's configuration; set when it is
// made, then read-only.
type serverConfig struct {
	pushback time.Duration
	bad      error // a nil option's error: every call fails with it
}

// WithPushback sets the wait a refusal asks its client for (PushbackKey in
// the trailer): DefaultPushback by default; a negative d sends none. An
// open breaker's refusal asks for the time until it lets calls through
// again instead, when that is longer.
func WithPushback(d time.Duration) ServerOption {
	return func(c *serverConfig) { c.pushback = d }
}

func newServerConfig(opts []ServerOption) serverConfig {
	c := serverConfig{pushback: DefaultPushback}
	for i, o := range opts {
		if o == nil {
			c.bad = nilOption(i, len(opts)) // as newClientConfig
			break
		}
		o(&c)
	}
	return c
}

// ServerCall is one incoming gRPC call on its way through a server's
// admission stack: the request type of a stack for the server interceptors.
// It never changes once made, and is safe for concurrent use; a nil
// *ServerCall answers zero values.
type ServerCall struct {
	ctx    context.Context
	method string
	kind   Kind

	req   any
	unary grpc.UnaryHandler

	srv    any
	ss     grpc.ServerStream
	stream grpc.StreamHandler
}

// Method returns the call's full method name, "/package.Service/Method".
func (c *ServerCall) Method() string {
	if c == nil {
		return ""
	}
	return c.method
}

// Kind returns the call's kind.
func (c *ServerCall) Kind() Kind {
	if c == nil {
		return Unary
	}
	return c.kind
}

// Request returns a unary call's request message; nil for a stream.
func (c *ServerCall) Request() any {
	if c == nil {
		return nil
	}
	return c.req
}

// Context returns the incoming call's context, with its metadata, peer and
// deadline (metadata.FromIncomingContext, peer.FromContext), for a
// filter's predicate, say.
func (c *ServerCall) Context() context.Context {
	if c == nil {
		return context.Background()
	}
	return c.ctx
}

// Handle returns the leaf service of a server's admission stack: it runs
// the call's handler, on the goroutine gRPC gave the call, with the
// context the stages hand down (the handler of a stream sees it as its
// stream's Context). A unary call's response is the stack's; a stream's is
// nil. A server stack admits calls; it does not retry or hedge them: a
// Retry or Hedge stage in it would run a handler again.
//
// The service is safe for concurrent use.
func Handle() *actors.FuncService[*ServerCall, any] {
	return actors.Func(handle, "troupegrpc.Handle")
}

func handle(ctx context.Context, c *ServerCall) (any, error) {
	var out any
	var err error
	switch {
	case c == nil:
		return nil, ErrNilCall
	case c.unary != nil:
		out, err = c.unary(ctx, c.req)
	case c.stream != nil:
		err = c.stream(c.srv, &serverStream{ServerStream: c.ss, ctx: ctx})
	default:
		return nil, ErrNilCall
	}
	if err != nil {
		return out, &handlerError{err: err}
	}
	return out, nil
}

// serverStream is a handler's stream, with the stack's context.
type serverStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *serverStream) Context() context.Context { return s.ctx }

// UnaryServerInterceptor returns an interceptor that admits every unary
// call through svc, any troupe stack over the Handle leaf: a load shedder
// in front of a concurrency limit, a rate limit or an adaptive limit makes
// it admission control.
//
//	stack, err := stages.Stack[*troupegrpc.ServerCall, any]().
//		LoadShed(loadshed.Capacity(8)). // up to 8 wait for a slot, the rest are shed
//		Limit(64).
//		Build(sys, troupegrpc.Handle())
//	srv := grpc.NewServer(
//		grpc.UnaryInterceptor(troupegrpc.UnaryServerInterceptor(stack)),
//		grpc.StreamInterceptor(troupegrpc.StreamServerInterceptor(stack)))
//
// The call is reserved and called with the incoming context, so the
// client's deadline bounds the wait for admission. The handler's own
// error is returned as it is. An error of the stack's is answered with
// the status code Code gives it: a shed call RESOURCE_EXHAUSTED, an open
// breaker's or a closed stack's UNAVAILABLE, both with a pushback in the
// trailer (WithPushback); a deadline that passed while waiting,
// DEADLINE_EXCEEDED.
//
// The interceptor is safe for concurrent use.
func UnaryServerInterceptor(svc troupe.Service[*ServerCall, any], opts ...ServerOption) grpc.UnaryServerInterceptor {
	cfg := newServerConfig(opts)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		switch {
		case svc == nil:
			return nil, toStatus(ErrNilService)
		case cfg.bad != nil:
			return nil, toStatus(cfg.bad)
		}
		c := &ServerCall{ctx: ctx, kind: Unary, req: req, unary: handler}
		if info != nil {
			c.method = info.FullMethod
		}
		out, err := troupe.Do(ctx, svc, c)
		if err == nil {
			return out, nil
		}
		return nil, cfg.refuse(err, func(md metadata.MD) { _ = grpc.SetTrailer(ctx, md) })
	}
}

// StreamServerInterceptor returns the stream interceptor of
// UnaryServerInterceptor: a stream holds its permits until its handler
// returns, so a concurrency limit counts open streams.
//
// The interceptor is safe for concurrent use.
func StreamServerInterceptor(svc troupe.Service[*ServerCall, any], opts ...ServerOption) grpc.StreamServerInterceptor {
	cfg := newServerConfig(opts)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		switch {
		case svc == nil:
			return toStatus(ErrNilService)
		case cfg.bad != nil:
			return toStatus(cfg.bad)
		}
		if ss == nil {
			return toStatus(ErrNilCall)
		}
		c := &ServerCall{ctx: ss.Context(), kind: BidiStream, srv: srv, ss: ss, stream: handler}
		if info != nil {
			c.method = info.FullMethod
			c.kind = kindOf(&grpc.StreamDesc{ClientStreams: info.IsClientStream, ServerStreams: info.IsServerStream})
		}
		if _, err := troupe.Do(ss.Context(), svc, c); err != nil {
			return cfg.refuse(err, ss.SetTrailer)
		}
		return nil
	}
}

// refuse returns err as the interceptor returns it: the handler's own
// error as it is, the stack's as a status, with a pushback for a refusal.
func (c *serverConfig) refuse(err error, setTrailer func(metadata.MD)) error {
	var h *handlerError
	if errors.As(err, &h) && error(h) == err {
		return h.err
	}
	st := toStatus(err)
	code := Code(st)
	if code != codes.ResourceExhausted && code != codes.Unavailable {
		return st
	}
	wait := c.pushback
	var open *breaker.OpenError
	if errors.As(err, &open) {
		wait = max(wait, open.RetryAfter(time.Now()))
	}
	if wait >= 0 {
		setTrailer(pushbackMD(wait))
	}
	return st
}
