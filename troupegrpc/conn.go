package troupegrpc

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/supervisor"
)

// InvokeOn returns a leaf service that sends each call on cc, a connection
// of its own, instead of with the invoker (or the streamer) gRPC handed
// the interceptor: the leaf of each endpoint of a balancer whose endpoints
// are connections, one per backend (Endpoints makes them), so that a call
// goes to the backend the balancer picked. Under Conn, which has no
// connection, it is the only leaf that can send.
//
// A unary attempt is cc.Invoke and a stream attempt cc.NewStream, each as
// Invoke makes it (see the package doc): a reply message of its own per
// attempt, the caller's grpc.Header, grpc.Trailer and grpc.Peer options
// filled from the attempt whose outcome the stack returns, a stream
// committed to an attempt at its header. cc's own interceptors run, if it
// has any; an interceptor chained after troupegrpc's on the connection the
// call was made on does not (Invoke would run it).
//
// A nil cc makes a leaf that Build refuses with an error matching
// troupe.ErrBadConfig. The service is safe for concurrent use (a
// *grpc.ClientConn is).
func InvokeOn(cc grpc.ClientConnInterface) *actors.FuncService[*Call, Result] {
	if cc == nil {
		return (*actors.FuncService[*Call, Result])(stagekit.BadFunc[*Call, Result]("troupegrpc.InvokeOn", opt.Nil("troupegrpc.InvokeOn", "the connection")))
	}
	return actors.Func(func(ctx context.Context, c *Call) (Result, error) { return sendOn(ctx, c, cc) }, "troupegrpc.InvokeOn")
}

// Conn returns a grpc.ClientConnInterface that sends every call, unary or
// streaming, through svc, as the client interceptors do, without a
// *grpc.ClientConn of its own: svc's leaves send on connections of their
// own (InvokeOn). It is the client side of a balancer whose endpoints are
// connections; generated clients take it as they take a
// *grpc.ClientConn:
//
//	dial := func(addr string) (*grpc.ClientConn, error) { return grpc.NewClient(addr, creds) }
//	bal, err := balance.New(balance.Poll(10*time.Second, resolve, troupegrpc.Endpoints(sys, dial, nil)))
//	stack, err := stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
//		Timeout(5 * time.Second).Layer(troupegrpc.Retry(2, bo)).Build(sys, bal)
//	client := pb.NewInventoryClient(troupegrpc.Conn(stack))
//
// Invoke does what UnaryClientInterceptor's interceptor does, and NewStream
// what StreamClientInterceptor's does, with the same outcomes and options;
// a call whose leaf is Invoke, which sends on the interceptor's
// connection, has none to go on and fails with ErrNoConn.
//
// The connection is safe for concurrent use. It holds nothing to close:
// close svc, and the balancer closes the endpoints it made.
func Conn(svc troupe.Service[*Call, Result], opts ...ClientOption) grpc.ClientConnInterface {
	return &conn{svc: svc, cfg: newClientConfig(opts)}
}

// conn is Conn's connection; its fields are set once, then read-only.
type conn struct {
	svc troupe.Service[*Call, Result]
	cfg clientConfig
}

// Invoke implements grpc.ClientConnInterface.
func (c *conn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return unaryCall(ctx, c.svc, c.cfg, method, args, reply, nil, nil, opts)
}

// NewStream implements grpc.ClientConnInterface.
func (c *conn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamCall(ctx, c.svc, c.cfg, desc, nil, method, nil, opts)
}

// Endpoints returns a build function for balance.Poll whose endpoints are
// connections, one per key Poll lists (a backend's address, say): for a
// key, dial makes the connection, and the endpoint is a supervised
// pipeline in sys (supervisor.New, named by the key, with opts) of the
// stack that stack(key) builds over InvokeOn(conn) (a nil stack: the leaf
// alone), so that each backend has its own limit, breaker or timeout:
//
//	dial := func(addr string) (*grpc.ClientConn, error) { return grpc.NewClient(addr, creds) }
//	perBackend := func(string) stages.Builder[*troupegrpc.Call, troupegrpc.Result] {
//		return stages.Stack[*troupegrpc.Call, troupegrpc.Result]().Limit(32).Timeout(time.Second)
//	}
//	bal, err := balance.New(balance.Poll(10*time.Second, resolve, troupegrpc.Endpoints(sys, dial, perBackend)))
//
// The endpoint owns its connection: closing it, which the balancer does
// once the endpoint is removed and its calls have finished (or when the
// balancer closes), closes the pipeline, then the connection. A dial error
// or a stack Build refuses is the build's error (Poll leaves the key out
// until a later poll builds it), and the connection dialled is closed; a
// nil sys or dial is each build's error.
//
// The build function is safe for concurrent use if dial and stack are.
func Endpoints[K comparable](sys *actors.System, dial func(key K) (*grpc.ClientConn, error), stack func(key K) stages.Builder[*Call, Result], opts ...supervisor.Option) func(key K) (troupe.Service[*Call, Result], error) {
	return func(key K) (troupe.Service[*Call, Result], error) {
		if dial == nil {
			return nil, opt.Nil("troupegrpc.Endpoints", "the dial function")
		}
		if sys == nil {
			return nil, opt.Nil("troupegrpc.Endpoints", "the system")
		}
		cc, err := dial(key)
		if err != nil {
			return nil, fmt.Errorf("troupegrpc: Endpoints: dialling %v: %w", key, err)
		}
		if cc == nil {
			return nil, fmt.Errorf("troupegrpc: Endpoints: dialling %v gave no connection", key)
		}
		p, err := supervisor.New(sys, fmt.Sprint(key), func(h troupe.Host) (troupe.Service[*Call, Result], error) {
			b := stages.Stack[*Call, Result]()
			if stack != nil {
				b = stack(key)
			}
			return b.Build(h, InvokeOn(cc))
		}, opts...)
		if err != nil {
			_ = cc.Close()
			return nil, err
		}
		return &endpoint{Pipeline: p, cc: cc}, nil
	}
}

// endpoint is one of Endpoints' endpoints: a pipeline and the connection
// its leaf sends on. Safe for concurrent use.
type endpoint struct {
	*supervisor.Pipeline[*Call, Result]
	cc *grpc.ClientConn
}

// Close closes the pipeline, then the connection.
func (e *endpoint) Close(ctx context.Context) error {
	err := e.Pipeline.Close(ctx)
	return errors.Join(err, e.cc.Close())
}
