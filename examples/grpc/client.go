package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupegrpc"
)

type stack = *troupe.Stack[*troupegrpc.Call, troupegrpc.Result]

// limiterRate is the rate the limiter enforces: cfg.rate per cfg.per,
// the period stretched by the safety margin, so that the server, which
// sees each attempt a little after the limiter lets it go (and not always
// equally late), never counts more than cfg.rate in a period.
func (c config) limiterRate() ratelimit.Rate {
	return ratelimit.Rate{Num: c.rate, Per: c.per + time.Duration(float64(c.per)*c.margin)}
}

func (c config) stackLine() string {
	r := c.limiterRate()
	return fmt.Sprintf("limit %d -> timeout %v -> retry (%d retries, %v doubling, or the server's pushback) -> ratelimit %d per %v (smooth) -> troupegrpc.Invoke",
		c.concurrency, c.timeout, c.retries, c.backoff, r.Num, r.Per)
}

func (c config) serverLine() string {
	return fmt.Sprintf("answers %.0f%% of attempts UNAVAILABLE and %.0f%% RESOURCE_EXHAUSTED (pushback %v); cuts %.0f%% of the streams after 2 of their %d prices",
		100*c.fail, 100*c.busy, c.pushback, 100*c.cut, c.ticks)
}

// buildStack builds the client's stack: the first layer added is the
// outermost. One stack serves the unary calls and the streams, so the
// limit counts calls and open streams together, and the rate limit every
// attempt of either.
func buildStack(h troupe.Host, cfg config) (stack, error) {
	bo, err := backoff.New(cfg.backoff, max(cfg.backoff, cfg.timeout)) // x2 each time
	if err != nil {
		return nil, err
	}
	return stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Limit(cfg.concurrency).
		Timeout(cfg.timeout).
		Layer(troupegrpc.Retry(cfg.retries, bo)).
		RateLimit(cfg.limiterRate(), ratelimit.Smooth(1)).
		Build(h, troupegrpc.Invoke())
}

// connect dials addr with st under both of the client's interceptors.
func connect(addr string, st stack) (*grpc.ClientConn, error) {
	return grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(troupegrpc.UnaryClientInterceptor(st)),
		grpc.WithStreamInterceptor(troupegrpc.StreamClientInterceptor(st)))
}

// tally is the client's side of a run; every field is guarded by mu.
type tally struct {
	mu        sync.Mutex
	ok        int
	failed    map[string]int // calls and streams, by status code
	whole     int            // streams that ended well
	cutAfter  int            // streams that failed after some prices
	ticks     int            // prices received
	latencies []time.Duration
}

func (t *tally) call(err error, took time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.latencies = append(t.latencies, took)
	if err == nil {
		t.ok++
		return
	}
	t.failed[status.Code(err).String()]++
}

func (t *tally) stream(ticks int, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ticks += ticks
	switch {
	case err == nil:
		t.whole++
	case ticks > 0:
		t.cutAfter++
		t.failed[status.Code(err).String()]++
	default:
		t.failed[status.Code(err).String()]++
	}
}

// work asks for the quotes and follows the streams, all at once: the
// stack's limit decides how many run.
func work(ctx context.Context, conn *grpc.ClientConn, cfg config) *tally {
	t := &tally{failed: map[string]int{}}
	var wg sync.WaitGroup
	for i := range cfg.streams {
		wg.Go(func() { t.stream(follow(ctx, conn, fmt.Sprintf("s-%d", i))) })
	}
	for i := range cfg.calls {
		wg.Go(func() {
			start := time.Now()
			out := new(wrapperspb.StringValue)
			err := conn.Invoke(ctx, quoteMethod, wrapperspb.String(fmt.Sprintf("q-%d", i)), out)
			t.call(err, time.Since(start))
		})
	}
	wg.Wait()
	return t
}

// follow reads stream id's prices to its end: how many came, and its
// error (nil when it ended well).
func follow(ctx context.Context, conn *grpc.ClientConn, id string) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a stream is over for gRPC when its context is
	s, err := conn.NewStream(ctx, pricesDesc, pricesMethod)
	if err != nil {
		return 0, err
	}
	if err := s.SendMsg(wrapperspb.String(id)); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	if err := s.CloseSend(); err != nil {
		return 0, err
	}
	n := 0
	for {
		if err := s.RecvMsg(new(wrapperspb.StringValue)); err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		n++
	}
}
