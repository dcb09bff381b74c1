// Command consumer is a program outside troupe's repository, built by
// scripts/consumer-check.sh against the modules as a user takes them: the
// core and the three integrations at their release, from a module proxy.
// It calls a stack once through each of them: a troupeotel observer that
// records the call, a gRPC client and server whose interceptors are
// stacks, and a redisquota budget whose Redis is away (the call takes the
// local share).
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"strconv"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/redisquota"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupegrpc"
	"github.com/troupe-go/troupe/troupeotel"
)

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("consumer: ok")
}

func run(ctx context.Context) (err error) {
	sys := actors.NewSystem()
	defer func() { err = errors.Join(err, sys.Shutdown(ctx)) }()
	for name, check := range map[string]func(context.Context, *actors.System) error{
		"troupeotel": otelCall, "troupegrpc": grpcCall, "redisquota": quotaCall,
	} {
		if err := check(ctx, sys); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

var double = actors.Func(func(_ context.Context, n int) (string, error) { return strconv.Itoa(2 * n), nil })

// otelCall calls a stack observed by troupeotel and finds the call in the
// metrics.
func otelCall(ctx context.Context, sys *actors.System) error {
	reader := metric.NewManualReader()
	obs, err := troupeotel.New(metric.NewMeterProvider(metric.WithReader(reader)))
	if err != nil {
		return err
	}
	svc, err := stages.Stack[int, string]().Observe(obs, "consumer").Limit(2).Build(sys, double)
	if err != nil {
		return err
	}
	if out, err := troupe.Do(ctx, svc, 21); err != nil || out != "42" {
		return fmt.Errorf("call: %q, %v", out, err)
	}
	if err := svc.Close(ctx); err != nil {
		return err
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return err
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == troupeotel.MetricCalls {
				return nil
			}
		}
	}
	return fmt.Errorf("no %s metric recorded", troupeotel.MetricCalls)
}

// grpcCall makes a health check over loopback through a client stack and a
// server's admission stack.
func grpcCall(ctx context.Context, sys *actors.System) error {
	admit, err := stages.Stack[*troupegrpc.ServerCall, any]().Limit(4).Build(sys, troupegrpc.Handle())
	if err != nil {
		return err
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(troupegrpc.UnaryServerInterceptor(admit)))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()
	stack, err := stages.Stack[*troupegrpc.Call, troupegrpc.Result]().Limit(4).Build(sys, troupegrpc.Invoke())
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(troupegrpc.UnaryClientInterceptor(stack)))
	if err != nil {
		return err
	}
	defer conn.Close()
	res, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return err
	}
	if res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("health %v", res.GetStatus())
	}
	return nil
}

// quotaCall calls a stack under a budget kept in a Redis that is not there
// (a closed loopback port): the policy gives the call the local share.
func quotaCall(ctx context.Context, sys *actors.System) error {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true, MaxRetries: -1})
	defer rdb.Close()
	budget, err := redisquota.NewBudget(rdb, "consumer", 2,
		redisquota.OnUnavailable(redisquota.Fallback(1)), redisquota.Logger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return err
	}
	svc, err := stages.Stack[int, string]().Layer(redisquota.Layer[int, string](budget)).Build(sys, double)
	if err != nil {
		return err
	}
	if out, err := troupe.Do(ctx, svc, 4); err != nil || out != "8" {
		return fmt.Errorf("call: %q, %v", out, err)
	}
	return svc.Close(ctx)
}
