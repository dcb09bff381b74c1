package troupegrpc_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/troupegrpc"
)

// A balancer whose endpoints are connections, one per backend: three
// servers on loopback, one of which answers UNAVAILABLE to every call.
// Endpoints dials each address the resolver lists and makes its endpoint
// a pipeline of its own (a limit) over InvokeOn, which sends on that
// connection; Conn is the client side, a grpc.ClientConnInterface that a
// generated client takes as it takes a *grpc.ClientConn. The Retry
// outside the balancer sends each retry to another backend.
func Example_balancer() {
	ctx := context.Background()
	var addrs []string
	for i := range 3 {
		srv := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error {
			in := new(wrapperspb.StringValue)
			if err := ss.RecvMsg(in); err != nil {
				return err
			}
			if i == 2 {
				return status.Error(codes.Unavailable, "down for maintenance")
			}
			return ss.SendMsg(wrapperspb.String("hello, " + in.GetValue()))
		}))
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println(err)
			return
		}
		go func() { _ = srv.Serve(lis) }()
		defer srv.Stop()
		addrs = append(addrs, lis.Addr().String())
	}

	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	resolve := func(context.Context) ([]string, error) { return addrs, nil }
	dial := func(addr string) (*grpc.ClientConn, error) {
		return grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	perBackend := func(string) stages.Builder[*troupegrpc.Call, troupegrpc.Result] {
		return stages.Stack[*troupegrpc.Call, troupegrpc.Result]().Limit(8)
	}
	bal, err := balance.New(balance.Poll(30*time.Second, resolve, troupegrpc.Endpoints(sys, dial, perBackend)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer bal.Close(ctx) // closes each endpoint's pipeline, then its connection
	bo, _ := backoff.New(time.Millisecond, 10*time.Millisecond)
	stack, err := stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Timeout(5*time.Second).
		Layer(troupegrpc.Retry(2, bo)).
		Build(sys, bal)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stack.Close(ctx)

	conn := troupegrpc.Conn(stack) // pb.NewGreeterClient(conn), with generated code
	failed := 0
	for i := range 30 {
		out := new(wrapperspb.StringValue)
		if err := conn.Invoke(ctx, "/demo.Greeter/Greet", wrapperspb.String(fmt.Sprint("caller ", i)), out); err != nil {
			failed++
		}
	}
	out := new(wrapperspb.StringValue)
	err = conn.Invoke(ctx, "/demo.Greeter/Greet", wrapperspb.String("troupe"), out)
	fmt.Println(out.GetValue(), err)
	fmt.Println("30 calls,", failed, "failed")
	// Output:
	// hello, troupe <nil>
	// 30 calls, 0 failed
}
