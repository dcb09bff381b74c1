package troupegrpc_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/grpclog"
	"google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/troupegrpc"
)

// grpc-go's interop cases report a failure through grpclog's Fatal, which
// exits the process: the logger below turns it into a panic of
// interopFailure, which runInterop recovers on the case's goroutine. Set
// before any gRPC function runs, as grpclog asks.
func init() { grpclog.SetLoggerV2(fatalPanics{grpclog.NewLoggerV2(io.Discard, io.Discard, os.Stderr)}) }

type interopFailure string

type fatalPanics struct{ grpclog.LoggerV2 }

func (fatalPanics) Fatal(args ...any) { panic(interopFailure(fmt.Sprint(args...))) }
func (fatalPanics) Fatalf(format string, args ...any) {
	panic(interopFailure(fmt.Sprintf(format, args...)))
}
func (fatalPanics) Fatalln(args ...any) { panic(interopFailure(fmt.Sprintln(args...))) }

// interopCase is one of grpc-go's interop client cases (package interop:
// every case that needs no credentials, no load balancer of its own and
// no second backend).
type interopCase struct {
	name string
	run  func(ctx context.Context, cc *grpc.ClientConn, addr string)
	// racesFault: the case's own deadline (1 ms, or a cancel right after
	// the stream opens) races the injected fault and the retry after it:
	// see raceLost.
	racesFault bool
}

func tc(cc *grpc.ClientConn) testgrpc.TestServiceClient { return testgrpc.NewTestServiceClient(cc) }

var interopCases = []interopCase{
	{name: "empty_unary", run: func(ctx context.Context, cc *grpc.ClientConn, _ string) { interop.DoEmptyUnaryCall(ctx, tc(cc)) }},
	{name: "large_unary", run: func(ctx context.Context, cc *grpc.ClientConn, _ string) { interop.DoLargeUnaryCall(ctx, tc(cc)) }},
	{name: "client_streaming", run: func(ctx context.Context, cc *grpc.ClientConn, _ string) { interop.DoClientStreaming(ctx, tc(cc)) }},
	{name: "server_streaming", run: func(ctx context.Context, cc *grpc.ClientConn, _ string) { interop.DoServerStreaming(ctx, tc(cc)) }},
	{name: "ping_pong", run: func(ctx context.Context, cc *grpc.ClientConn, _ string) { interop.DoPingPong(ctx, tc(cc)) }},
	{name: "empty_stream", run: func(ctx context.Context, cc *grpc.ClientConn, _ string) { interop.DoEmptyStream(ctx, tc(cc)) }},
	{name: "timeout_on_sleeping_server", racesFault: true, run: func(ctx context.Context, cc *grpc.ClientConn, _ string) {
		interop.DoTimeoutOnSleepingServer(ctx, tc(cc))
	}},
	{name: "cancel_after_begin", racesFault: true, run: func(ctx context.Context, cc *grpc.ClientConn, _ string) {
		interop.DoCancelAfterBegin(ctx, tc(cc))
	}},
	{name: "cancel_after_first_response", run: func(ctx context.Context, cc *grpc.ClientConn, _ string) {
		interop.DoCancelAfterFirstResponse(ctx, tc(cc))
	}},
	{name: "status_code_and_message", run: func(ctx context.Context, cc *grpc.ClientConn, _ string) {
		interop.DoStatusCodeAndMessage(ctx, tc(cc))
	}},
	{name: "special_status_message", run: func(ctx context.Context, cc *grpc.ClientConn, _ string) {
		interop.DoSpecialStatusMessage(ctx, tc(cc))
	}},
	{name: "custom_metadata", run: func(ctx context.Context, cc *grpc.ClientConn, _ string) { interop.DoCustomMetadata(ctx, tc(cc)) }},
	{name: "unimplemented_method", run: func(ctx context.Context, cc *grpc.ClientConn, _ string) { interop.DoUnimplementedMethod(ctx, cc) }},
	{name: "unimplemented_service", run: func(ctx context.Context, cc *grpc.ClientConn, _ string) {
		interop.DoUnimplementedService(ctx, testgrpc.NewUnimplementedServiceClient(cc))
	}},
	{name: "rpc_soak", run: func(ctx context.Context, cc *grpc.ClientConn, addr string) {
		interop.DoSoakTest(ctx, interop.SoakTestConfig{
			RequestSize: 2 << 10, ResponseSize: 2 << 10,
			PerIterationMaxAcceptableLatency: 10 * time.Second, OverallTimeout: 20 * time.Second,
			ServerAddr: addr, NumWorkers: 4, Iterations: 16,
			ChannelForTest: func() (*grpc.ClientConn, func()) { return cc, func() {} },
		})
	}},
}

// runInterop runs c against cc and returns what the case reported as
// its failure; "" when it passed.
func runInterop(ctx context.Context, c interopCase, cc *grpc.ClientConn, addr string) string {
	done := make(chan string, 1)
	go func() {
		defer func() {
			switch r := recover().(type) {
			case nil:
				done <- ""
			case interopFailure:
				done <- string(r)
			default:
				done <- fmt.Sprint("panic: ", r)
			}
		}()
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		c.run(ctx, cc, addr)
	}()
	return <-done
}

// callIDKey is the metadata key of the id the client stamps on each call,
// the same for every attempt of the call, so that the server can tell a
// call's first attempt.
const callIDKey = "x-troupe-test-call"

// stampCalls returns client interceptors, outside the stack's, that give
// each call an id of its own.
func stampCalls() (grpc.UnaryClientInterceptor, grpc.StreamClientInterceptor) {
	var n atomic.Int64
	stamp := func(ctx context.Context) context.Context {
		return metadata.AppendToOutgoingContext(ctx, callIDKey, strconv.FormatInt(n.Add(1), 10))
	}
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(stamp(ctx), method, req, reply, cc, opts...)
		}, func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return streamer(stamp(ctx), desc, cc, method, opts...)
		}
}

// failFirst returns server interceptors that answer the first attempt of
// each call UNAVAILABLE, before its handler runs (and so before any
// header).
func failFirst() (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	var seen sync.Map
	first := func(ctx context.Context) bool {
		md, _ := metadata.FromIncomingContext(ctx)
		ids := md.Get(callIDKey)
		if len(ids) == 0 {
			return false
		}
		_, loaded := seen.LoadOrStore(ids[0], true)
		return !loaded
	}
	errFault := status.Error(codes.Unavailable, "injected: first attempt")
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if first(ctx) {
				return nil, errFault
			}
			return h(ctx, req)
		}, func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if first(ss.Context()) {
				return errFault
			}
			return h(srv, ss)
		}
}

// serveInterop starts grpc-go's interop test server on a loopback port,
// behind a server stack of a load shedder and a limit, and, with fault,
// behind failFirst; it stops with the test.
func serveInterop(t testing.TB, fault bool) string {
	t.Helper()
	st := admission(t, stages.Stack[*troupegrpc.ServerCall, any]().LoadShed(loadshed.Capacity(64)).Limit(64))
	unary := []grpc.UnaryServerInterceptor{troupegrpc.UnaryServerInterceptor(st)}
	streams := []grpc.StreamServerInterceptor{troupegrpc.StreamServerInterceptor(st)}
	if fault {
		u, s := failFirst()
		unary, streams = append([]grpc.UnaryServerInterceptor{u}, unary...), append([]grpc.StreamServerInterceptor{s}, streams...)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(streams...), grpc.WaitForHandlers(true))
	testgrpc.RegisterTestServiceServer(srv, interop.NewTestServer())
	return start(t, srv)
}

// interopStacks are the client stacks the cases run through: a limit, a
// timeout, a retry and a hedge that hedges every call at once (no delay,
// no budget), the hedge inside the retry or outside it.
var interopStacks = []struct {
	name  string
	stack func(bo backoff.Exponential) stages.Builder[*troupegrpc.Call, troupegrpc.Result]
}{
	{"retry over hedge", func(bo backoff.Exponential) stages.Builder[*troupegrpc.Call, troupegrpc.Result] {
		return stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
			Limit(64).
			Timeout(10*time.Second).
			Layer(troupegrpc.Retry(3, bo)).
			Hedge(hedge.Delay(0), hedge.NoBudget())
	}},
	{"hedge over retry", func(bo backoff.Exponential) stages.Builder[*troupegrpc.Call, troupegrpc.Result] {
		return stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
			Limit(64).
			Timeout(10*time.Second).
			Hedge(hedge.Delay(0), hedge.NoBudget()).
			Layer(troupegrpc.Retry(3, bo))
	}},
}

// raceLost reports whether failure, a racing case's (racesFault) under the
// injected fault, is the race its own deadline loses: the case got the
// fault's UNAVAILABLE instead of its deadline's or its cancellation's
// status (the fault came after the deadline, so the attempt was not
// retried, and its status was the call's). Plain grpc-go loses the same
// race, with its own retries (4 attempts of UNAVAILABLE, 1 to 10 ms
// apart) and the same fault: of 200 runs of timeout_on_sleeping_server
// under -race on a 2-core machine, 25 and 31 (two runs) failed, with the
// fault's UNAVAILABLE or with Send's DEADLINE_EXCEEDED; cancel_after_begin
// failed in none, and through both troupe stacks neither case failed in
// 200 (BenchmarkInteropCasesThatRaceTheFault measures it).
func raceLost(failure string) bool {
	return strings.Contains(failure, "injected: first attempt") || // timeout_on_sleeping_server's Recv
		strings.Contains(failure, fmt.Sprintf("got error code %d, want %d", codes.Unavailable, codes.Canceled)) // cancel_after_begin's
}

// dialInterop connects to addr through the client stack built from sk,
// with each call stamped (stampCalls).
func dialInterop(t testing.TB, addr string, sk func(backoff.Exponential) stages.Builder[*troupegrpc.Call, troupegrpc.Result]) *grpc.ClientConn {
	bo, err := backoff.New(time.Millisecond, 10*time.Millisecond)
	require.NoError(t, err)
	svc := build(t, sk(bo))
	su, ss := stampCalls()
	return dial(t, addr,
		grpc.WithChainUnaryInterceptor(su, troupegrpc.UnaryClientInterceptor(svc)),
		grpc.WithChainStreamInterceptor(ss, troupegrpc.StreamClientInterceptor(svc)))
}

// spec: EG11, G1, G2
func TestInteropCasesPassThroughAHedgingClientStackAndAnAdmissionServerStack(t *testing.T) {
	for _, fault := range []bool{false, true} {
		for _, sk := range interopStacks {
			t.Run(fmt.Sprintf("%s, fault %v", sk.name, fault), func(t *testing.T) {
				addr := serveInterop(t, fault)
				cc := dialInterop(t, addr, sk.stack)
				for _, c := range interopCases {
					t.Run(c.name, func(t *testing.T) {
						f := runInterop(t.Context(), c, cc, addr)
						switch {
						case f == "":
						case fault && c.racesFault && raceLost(f):
							t.Logf("the case's deadline lost its race with the fault (see raceLost): %s", f)
						default:
							t.Error(f)
						}
					})
				}
			})
		}
	}
}

// BenchmarkInteropCasesThatRaceTheFault runs the interop cases whose own
// deadline races the injected fault (racesFault) under the fault, through
// plain grpc-go with its own retries and through each client stack, and
// reports the share of runs that failed:
//
//	go test -race -run '^$' -bench InteropCasesThatRaceTheFault -benchtime 200x .
func BenchmarkInteropCasesThatRaceTheFault(b *testing.B) {
	addr := serveInterop(b, true)
	clients := []struct {
		name string
		cc   *grpc.ClientConn
	}{{"grpc-go", dialPlain(b, addr)}}
	for i, sk := range interopStacks {
		clients = append(clients, struct {
			name string
			cc   *grpc.ClientConn
		}{fmt.Sprint("troupe-", i+1), dialInterop(b, addr, sk.stack)})
	}
	failed := map[string]int{}
	for b.Loop() {
		for _, cl := range clients {
			for _, c := range interopCases {
				if c.racesFault && runInterop(b.Context(), c, cl.cc, addr) != "" {
					failed[cl.name+"-"+c.name]++
				}
			}
		}
	}
	for _, cl := range clients {
		for _, c := range interopCases {
			if c.racesFault {
				b.ReportMetric(float64(failed[cl.name+"-"+c.name])/float64(b.N), cl.name+"-"+c.name+"-failed/op")
			}
		}
	}
	b.ReportMetric(0, "ns/op")
}

// dialPlain connects to addr with grpc-go's own retries (UNAVAILABLE, 4
// attempts) and no interceptor but the call stamp.
func dialPlain(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	su, ss := stampCalls()
	return dial(t, addr,
		grpc.WithChainUnaryInterceptor(su), grpc.WithChainStreamInterceptor(ss),
		grpc.WithDefaultServiceConfig(`{"methodConfig": [{"name": [{"service": "grpc.testing.TestService"}],
			"retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.001s", "maxBackoff": "0.01s",
				"backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}`))
}
