package bench

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/failsafe-go/failsafe-go/ratelimiter"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"
	"golang.org/x/time/rate"

	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
)

// stackConfig is the stack every variant builds: a concurrency limit, then a
// timeout, then a retry (that never fires: the downstreams here succeed),
// then a rate limit far above the offered load, over the downstream.
type stackConfig struct {
	limit   int
	timeout time.Duration
	retries int
	rate    int // requests per second
}

// stdStack is the stack of the issue: limit 20 -> timeout 10 s -> retry up
// to 3 -> rate limit 1e9/s.
var stdStack = stackConfig{limit: 20, timeout: 10 * time.Second, retries: 3, rate: 1e9}

var errTimedOut = errors.New("bench: timed out")

// ---- direct: the downstream called as a function (the floor) ----

func directVariant() variant {
	return variant{"direct", func(_ *testing.B, down callFn) (func() callFn, func()) {
		return shared(down), func() {}
	}}
}

// ---- funcstack: the four stages hand-written as function wrappers ----

func funcstackVariant(c stackConfig) variant {
	return variant{"funcstack", func(_ *testing.B, down callFn) (func() callFn, func()) {
		return shared(funcStack(c, down)), func() {}
	}}
}

// funcStack is what a Go programmer writes without a library: a semaphore
// channel, context.WithTimeout, a retry loop and golang.org/x/time/rate,
// each a function wrapping the next.
func funcStack(c stackConfig, down callFn) callFn {
	lim := rate.NewLimiter(rate.Limit(c.rate), 1000)
	rl := func(ctx context.Context, v int) (int, error) {
		if err := lim.Wait(ctx); err != nil {
			return 0, err
		}
		return down(ctx, v)
	}
	rt := func(ctx context.Context, v int) (int, error) {
		for i := 0; ; i++ {
			r, err := rl(ctx, v)
			if err == nil || i >= c.retries || ctx.Err() != nil {
				return r, err
			}
		}
	}
	to := func(ctx context.Context, v int) (int, error) {
		ctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		return rt(ctx, v)
	}
	return withSemaphore(c.limit, to)
}

// ---- failsafe: failsafe-go's policies composed the same way ----

func failsafeVariant(c stackConfig) variant {
	return variant{"failsafe", func(_ *testing.B, down callFn) (func() callFn, func()) {
		// Both the bulkhead and the rate limiter reject instead of waiting
		// by default (max wait 0): allow waits, as the other variants wait.
		bh := bulkhead.NewBuilder[int](uint(c.limit)).WithMaxWaitTime(time.Minute).Build()
		to := fstimeout.New[int](c.timeout)
		rp := retrypolicy.NewBuilder[int]().WithMaxRetries(c.retries).Build()
		rl := ratelimiter.NewSmoothBuilder[int](uint(c.rate), time.Second).WithMaxWaitTime(time.Minute).Build()
		// With(a, b, c, d) composes a(b(c(d(fn)))): a is outermost.
		ex := failsafe.With[int](bh, to, rp, rl)
		return shared(func(ctx context.Context, v int) (int, error) {
			e := ex
			if ctx != context.Background() {
				e = ex.WithContext(ctx)
			}
			return e.GetWithExecution(func(exec failsafe.Execution[int]) (int, error) {
				return down(exec.Context(), v)
			})
		}), func() {}
	}}
}

// ---- chanchain: one goroutine per stage, joined by buffered channels ----

// ccMsg is a request in the channel chain; it travels by value.
type ccMsg struct {
	ctx      context.Context
	v        int
	deadline int64 // set by the timeout stage, in UnixNano
	attempts int   // retry budget, set by the retry stage
	reply    chan ccRes
}

type ccRes struct {
	v   int
	err error
}

// chanchainVariant is the physical limit of a stage-per-goroutine design:
// four goroutines (limit, timeout, retry, rate limit) joined by buffered
// channels, each doing its stage's trivial work, a reply channel in the
// message. The limit stage takes a slot of a semaphore channel; the timeout
// stage stamps a deadline; the retry stage sets the attempt budget; the rate
// limit stage counts the request in a fixed window, calls the downstream
// (retrying on error while the budget lasts), checks the deadline, frees the
// semaphore slot and replies.
//
// With handBack, the last stage does not call the downstream: it replies at
// once and the caller runs the downstream itself, then frees the slot (what
// troupe does; needed when the downstream blocks, or the last goroutine would
// serialise every call).
func chanchainVariant(c stackConfig, handBack bool) variant {
	return variant{"chanchain", func(_ *testing.B, down callFn) (func() callFn, func()) {
		const capacity = 64
		in := make(chan ccMsg, capacity)
		toTimeout := make(chan ccMsg, capacity)
		toRetry := make(chan ccMsg, capacity)
		toRate := make(chan ccMsg, capacity)
		sem := make(chan struct{}, c.limit)
		done := make(chan struct{})
		go func() { // limit
			for m := range in {
				sem <- struct{}{}
				toTimeout <- m
			}
			close(toTimeout)
		}()
		go func() { // timeout
			for m := range toTimeout {
				m.deadline = time.Now().Add(c.timeout).UnixNano()
				toRetry <- m
			}
			close(toRetry)
		}()
		go func() { // retry
			for m := range toRetry {
				m.attempts = c.retries
				toRate <- m
			}
			close(toRate)
		}()
		go func() { // rate limit, and the downstream call
			defer close(done)
			var windowStart time.Time
			count := 0
			for m := range toRate {
				now := time.Now()
				if now.Sub(windowStart) >= time.Second {
					windowStart, count = now, 0
				}
				count++
				if count > c.rate {
					// Never reached at the offered loads here: wait out the window.
					time.Sleep(time.Second - now.Sub(windowStart))
					windowStart, count = time.Now(), 1
				}
				if handBack {
					m.reply <- ccRes{}
					continue
				}
				var res ccRes
				for {
					res.v, res.err = down(m.ctx, m.v)
					if res.err == nil || m.attempts == 0 {
						break
					}
					m.attempts--
				}
				if time.Now().UnixNano() > m.deadline {
					res = ccRes{err: errTimedOut}
				}
				<-sem
				m.reply <- res
			}
		}()
		newCaller := func() callFn {
			reply := make(chan ccRes, 1)
			return func(ctx context.Context, v int) (int, error) {
				in <- ccMsg{ctx: ctx, v: v, reply: reply}
				res := <-reply
				if handBack {
					res.v, res.err = down(ctx, v)
					<-sem
				}
				return res.v, res.err
			}
		}
		return newCaller, func() { close(in); <-done }
	}}
}

// ---- protoactor: four protoactor-go actors, default settings ----

type paReq struct {
	v        int
	deadline int64
	attempts int
}

type paDone struct{}

type paQueued struct {
	req    *paReq
	sender *actor.PID
}

// protoactorVariant is what a user writes on protoactor-go by hand: four
// actors with default props (unbounded mailbox, default dispatcher), the
// caller's RequestFuture into the first, Forward from stage to stage so the
// last can Respond to the caller's future. The limit actor counts requests in
// flight and queues the excess; the last actor tells it when one is done.
// The last actor calls the downstream.
func protoactorVariant(c stackConfig) variant {
	return variant{"protoactor", func(b *testing.B, down callFn) (func() callFn, func()) {
		as := quietActorSystem()
		root := as.Root
		var limitPID *actor.PID
		var windowStart time.Time
		count := 0
		ratePID := root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
			m, ok := ctx.Message().(*paReq)
			if !ok {
				return
			}
			now := time.Now()
			if now.Sub(windowStart) >= time.Second {
				windowStart, count = now, 0
			}
			count++
			var res int
			var err error
			if count > c.rate { // never at the offered loads here
				ctx.Respond(errors.New("protoactor: rate limited"))
				ctx.Send(limitPID, paDone{})
				return
			}
			for {
				res, err = down(context.Background(), m.v)
				if err == nil || m.attempts == 0 {
					break
				}
				m.attempts--
			}
			if time.Now().UnixNano() > m.deadline {
				err = errTimedOut
			}
			if err != nil {
				ctx.Respond(err)
			} else {
				ctx.Respond(res)
			}
			ctx.Send(limitPID, paDone{})
		}))
		retryPID := root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
			if m, ok := ctx.Message().(*paReq); ok {
				m.attempts = c.retries
				ctx.Forward(ratePID)
			}
		}))
		timeoutPID := root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
			if m, ok := ctx.Message().(*paReq); ok {
				m.deadline = time.Now().Add(c.timeout).UnixNano()
				ctx.Forward(retryPID)
			}
		}))
		inFlight := 0
		var queue []paQueued
		limitPID = root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
			switch m := ctx.Message().(type) {
			case *paReq:
				if inFlight < c.limit {
					inFlight++
					ctx.Forward(timeoutPID)
				} else {
					queue = append(queue, paQueued{m, ctx.Sender()})
				}
			case paDone:
				inFlight--
				if len(queue) > 0 {
					q := queue[0]
					queue[0] = paQueued{}
					queue = queue[1:]
					inFlight++
					ctx.RequestWithCustomSender(timeoutPID, q.req, q.sender)
				}
			}
		}))
		call := func(_ context.Context, v int) (int, error) {
			r, err := root.RequestFuture(limitPID, &paReq{v: v}, c.timeout).Result()
			if err != nil {
				return 0, err
			}
			switch r := r.(type) {
			case int:
				return r, nil
			case error:
				return 0, r
			default:
				return 0, fmt.Errorf("protoactor: unexpected response %T", r)
			}
		}
		return shared(call), func() {
			for _, pid := range []*actor.PID{limitPID, timeoutPID, retryPID, ratePID} {
				_ = root.StopFuture(pid).Wait()
			}
			as.Shutdown()
		}
	}}
}

// ---- troupe: the same stack from troupe's stages ----

// troupeBuilder is the stack as troupe layers.
func troupeBuilder(c stackConfig) stages.Builder[int, int] {
	return stages.Stack[int, int]().
		Limit(c.limit).
		Timeout(c.timeout).
		Retry(c.retries, nil).
		RateLimit(ratelimit.Rate{Num: c.rate, Per: time.Second})
}

func troupeVariant(c stackConfig) variant { return troupeOf("troupe", troupeBuilder(c)) }
