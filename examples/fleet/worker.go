package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/redisquota"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupehttp"
)

// workerFlags are what the fleet tells a worker on its command line.
type workerFlags struct {
	on       bool
	id       int
	url, key string
}

// report is a worker's result, printed as one JSON line on its stdout.
type report struct {
	Worker   int    `json:"worker"`
	OK       int    `json:"ok"`
	Failed   int    `json:"failed"`
	FirstErr string `json:"first_err,omitempty"`
}

// runWorker is one process of the fleet: the OCR stack, its rate limit
// asking the shared Limiter, sending cfg.requests requests at once.
func runWorker(ctx context.Context, out io.Writer, cfg config, w workerFlags) (err error) {
	rdb := redis.NewClient(&redis.Options{Addr: cfg.redis, ContextTimeoutEnabled: true})
	defer rdb.Close()
	var opts []redisquota.Option
	if cfg.fallback {
		opts = append(opts, redisquota.OnUnavailable(redisquota.Fallback(cfg.workers)))
	}
	lim, err := redisquota.NewLimiter(rdb, w.key, ratelimit.Rate{Num: cfg.rate, Per: cfg.limiterPer()}, opts...)
	if err != nil {
		return err
	}
	bo, err := backoff.New(200*time.Millisecond, 10*time.Second)
	if err != nil {
		return err
	}
	sys := actors.NewSystem()
	defer func() { _ = sys.Shutdown(context.WithoutCancel(ctx)) }()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 20}}
	defer hc.CloseIdleConnections()
	stack, err := stages.Stack[*http.Request, *http.Response]().
		Limit(20).
		Timeout(cfg.timeout).
		Layer(troupehttp.Retry(3, bo)).
		RateLimit(lim.Rate(), ratelimit.Remote(lim)). // the fleet's quota, not this process's
		Build(sys, troupehttp.Client(hc))
	if err != nil {
		return err
	}
	defer func() { _ = stack.Close(context.WithoutCancel(ctx)) }()

	rep := report{Worker: w.id}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range cfg.requests {
		wg.Go(func() {
			err := one(ctx, stack, w, i)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				rep.OK++
				return
			}
			rep.Failed++
			if rep.FirstErr == "" {
				rep.FirstErr = err.Error()
			}
		})
	}
	wg.Wait()
	return json.NewEncoder(out).Encode(rep)
}

// one sends request i of worker w and reads its answer.
func one(ctx context.Context, svc troupe.Service[*http.Request, *http.Response], w workerFlags, i int) error {
	body := []byte(fmt.Sprintf("\x89PNG image %d of worker %d", i, w.id))
	req, err := http.NewRequest(http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set(headerWorker, strconv.Itoa(w.id))
	req.Header.Set("X-Request-Id", fmt.Sprintf("%d-%d", w.id, i))
	req.Header.Set("Idempotency-Key", req.Header.Get("X-Request-Id")) // safe to send again: troupehttp's retry policy sends a POST once without one
	res, err := troupe.Do(ctx, svc, req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s after the retries", res.Status)
	}
	return nil
}
