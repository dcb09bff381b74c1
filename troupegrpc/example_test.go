package troupegrpc_test

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupegrpc"
)

// A troupe stack (limit, timeout, retry) under a gRPC client: the flaky
// server's two UNAVAILABLE answers are retried.
func Example() {
	ctx := context.Background()

	// A server on loopback whose every method fails twice, then greets.
	var calls atomic.Int32
	srv := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error {
		in := new(wrapperspb.StringValue)
		if err := ss.RecvMsg(in); err != nil {
			return err
		}
		if calls.Add(1) <= 2 {
			return status.Error(codes.Unavailable, "warming up")
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

	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	bo, _ := backoff.New(time.Millisecond, 10*time.Millisecond)
	stack, err := stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Limit(8).
		Timeout(5*time.Second).
		Layer(troupegrpc.Retry(3, bo)).
		Build(sys, troupegrpc.Invoke())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stack.Close(ctx)

	conn, err := grpc.NewClient("passthrough:///"+lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(troupegrpc.UnaryClientInterceptor(stack)),
		grpc.WithStreamInterceptor(troupegrpc.StreamClientInterceptor(stack)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()

	out := new(wrapperspb.StringValue)
	err = conn.Invoke(ctx, "/demo.Greeter/Greet", wrapperspb.String("troupe"), out)
	fmt.Println(out.GetValue(), err, "after", calls.Load(), "attempts")
	// Output: hello, troupe <nil> after 3 attempts
}
