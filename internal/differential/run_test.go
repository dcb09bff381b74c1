package differential

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/spawnready"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// runModel runs the script through the model.
func runModel(sc *script) record {
	w := &world{sc: sc, attempts: map[int]int{}}
	w.before = func() { w.by = nil } // an event is another goroutine's unless it says so
	var entry mstage = mleaf{}
	for i := len(sc.layers) - 1; i >= 0; i-- {
		entry = w.build(sc.layers[i], entry)
	}
	for i, a := range sc.callers {
		c := &mcaller{w: w, id: i, ctx: &mctx{s: &w.sim}}
		w.callers = append(w.callers, c)
		w.at(a.at, func() { c.call(entry) })
		if a.deadline > 0 {
			w.at(a.at+a.deadline, func() {
				c.ctx.end("deadline")
				c.loop()
			})
		}
	}
	w.run(time.Hour)
	rec := record{calls: w.calls, racy: w.racy}
	for _, c := range w.callers {
		if !c.returned {
			c.out, c.retAt = fail("never returned"), -1
		}
		rec.outs = append(rec.outs, c.out)
		rec.rets = append(rec.rets, c.retAt)
	}
	sortCalls(rec.calls)
	return rec
}

func (w *world) build(l layer, inner mstage) mstage {
	switch l.kind {
	case "limit":
		return w.limit(l.n, inner)
	case "buffer":
		return w.buffer(l.n, inner)
	case "loadshed":
		return w.loadshed(l.n, inner)
	case "timeout":
		return w.timeout(l.d, inner)
	case "retry":
		return w.retry(l.n, l.d, inner)
	case "ratelimit":
		return w.ratelimit(l.n, l.d, inner)
	case "filter":
		return w.filter(inner)
	case "fallback":
		return w.fallback(inner)
	case "hedge":
		return w.hedge(l.d, inner)
	case "breaker":
		return w.breaker(l.n, l.min, l.k, l.d, inner)
	case "asyncfilter":
		return w.asyncfilter(l.d, inner)
	case "spawnready":
		return w.spawnready(l.n, inner)
	case "abandon":
		return w.abandon(l.d, inner)
	case "adaptive":
		if !enableAdaptiveKeep {
			return w.limitNoKeep(l.n, inner)
		}
		b := w.limit(l.n, inner).(*mbox)
		b.afterFirst = true // its first request reports the starting limit on the actor
		return b
	}
	panic("unknown kind " + l.kind)
}

// call is troupe.Do: the request reserves a slot of the outermost stage
// (waiting in its line) and goes; a LoadShed outermost sheds instead.
func (c *mcaller) call(entry mstage) {
	r := &mreq{c: c, ctx: c.ctx, id: c.id}
	switch s := entry.(type) {
	case *mshed:
		if !s.b.tryReserve() {
			c.deliver(fail("overloaded"))
			return
		}
		s.b.send(r, c.deliver)
	case *mbox:
		w := &waiter{}
		w.grant = func() {
			c.inLine = nil
			s.send(r, c.deliver)
		}
		if s.reserveAsync(w) {
			s.send(r, c.deliver)
			return
		}
		c.inLine = func() { s.cancelWait(w) }
	default:
		entry.send(r, c.deliver)
	}
}

// errLeaf is the downstream's own error.
var errLeaf = errors.New("leaf error")

// classify names an error's class as the model does.
func classify(err error) string {
	var ee *retry.ExhaustedError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ee):
		return "exhausted/" + classify(ee.Err)
	case errors.Is(err, troupe.ErrPanic):
		return "panic"
	case errors.Is(err, timeout.ErrTimeout):
		return "timeout"
	case errors.Is(err, breaker.ErrOpen):
		return "open"
	case errors.Is(err, loadshed.ErrOverloaded):
		return "overloaded"
	case errors.Is(err, filter.ErrRejected):
		return "rejected"
	case errors.Is(err, errLeaf):
		return "leaf"
	case errors.Is(err, retry.ErrSessionOver):
		return "sessionover"
	case errors.Is(err, stagekit.ErrCallerGone):
		return "callergone"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "unknown: " + err.Error()
}

func (l layer) add(b stages.Builder[int, int]) stages.Builder[int, int] {
	switch l.kind {
	case "limit":
		return b.Limit(l.n)
	case "buffer":
		return b.Buffer(l.n)
	case "loadshed":
		return b.LoadShed(loadshed.Capacity(l.n))
	case "timeout":
		return b.Timeout(l.d)
	case "retry":
		var bo retry.Delayer
		if l.d > 0 {
			bo = fixed(l.d)
		}
		return b.Retry(l.n, bo)
	case "ratelimit":
		return b.RateLimit(ratelimit.Rate{Num: l.n, Per: l.d})
	case "filter":
		return b.Filter(func(id int) (int, error) {
			if rejects(id) {
				return 0, errors.New("odd one out")
			}
			return id, nil
		})
	case "fallback":
		return b.Fallback(func(_ context.Context, id int, _ error) (int, error) { return -id, nil })
	case "hedge":
		return b.Hedge(hedge.Delay(l.d), hedge.NoBudget())
	case "breaker":
		return b.Breaker(breaker.CountWindow(l.n), breaker.MinCalls(l.min), breaker.HalfOpenTrials(l.k), breaker.OpenDelay(l.d))
	case "asyncfilter":
		var mu sync.Mutex
		checks := map[int]int{}
		return b.AsyncFilter(func(ctx context.Context, id int) (int, error) {
			mu.Lock()
			d := checkTime(l.d, id, checks[id])
			checks[id]++
			mu.Unlock()
			if err := sleepCtx(ctx, d, id); err != nil {
				return 0, err
			}
			if rejects(id) {
				return 0, errors.New("odd one out")
			}
			return id, nil
		})
	case "abandon":
		return b.Timeout(l.d, timeout.Abandon())
	case "spawnready":
		return b.SpawnReady(spawnready.Capacity(l.n))
	case "adaptive":
		return b.Adaptive(adaptive.Limits(l.n, l.n), adaptive.Initial(l.n))
	}
	panic("unknown kind " + l.kind)
}

// sleepCtx waits d, or until ctx ends: then it returns ctx's error after
// caller id's reaction time.
func sleepCtx(ctx context.Context, d time.Duration, id int) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		time.Sleep(reaction(id))
		return ctx.Err()
	}
}

type fixed time.Duration

func (f fixed) Delay(int) time.Duration { return time.Duration(f) }

var trace = flag.Bool("differential.trace", false, "print the real side's events (for one script: with -rapid.seed)")

type callerKey struct{}

// tracer prints every event with its time and caller.
type tracer struct {
	mu sync.Mutex
	t0 time.Time
}

func (tr *tracer) Observe(ev troupe.Event) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	id := -1
	if ev.Context != nil {
		if v, ok := ev.Context.Value(callerKey{}).(int); ok {
			id = v
		}
	}
	fmt.Printf("%v %s %v caller=%d attempt=%d outcome=%v err=%v\n", time.Since(tr.t0), ev.Stage, ev.Type, id, ev.Attempt, ev.Outcome, ev.Err)
}

// runReal runs the script through troupe, in t's bubble.
func runReal(t *testing.T, sc *script) (rec record, err error) {
	sys := troupetest.NewSystem(t)
	if watchSystem != nil {
		watchSystem(sys)
	}
	b := stages.Stack[int, int]()
	t0 := time.Now()
	if *trace {
		b = b.Observe(&tracer{t0: t0}, "trace")
	}
	for _, l := range sc.layers {
		b = l.add(b)
	}
	var mu sync.Mutex
	var work sync.WaitGroup // the downstream's calls under way: work nobody waits for (a lost hedge) may outlive its stack
	attempts := map[int]int{}
	leaf := actors.Func(func(ctx context.Context, id int) (int, error) {
		work.Add(1)
		defer work.Done()
		mu.Lock()
		n := attempts[id]
		attempts[id]++
		rec.calls = append(rec.calls, call{id: id, n: n, at: time.Since(t0)})
		mu.Unlock()
		st := sc.step(id, n)
		if st.stubborn {
			time.Sleep(st.lat)
		} else if err := sleepCtx(ctx, st.lat, id); err != nil {
			return 0, err
		}
		switch st.kind {
		case stepErr:
			return 0, errLeaf
		case stepPanic:
			panic("the downstream panicked")
		}
		return id*100 + n, nil
	})
	st, err := b.Build(sys, leaf)
	if err != nil {
		return rec, err
	}
	rec.outs = make([]outcome, len(sc.callers))
	rec.rets = make([]time.Duration, len(sc.callers))
	var wg sync.WaitGroup
	for i, a := range sc.callers {
		wg.Go(func() {
			time.Sleep(a.at)
			ctx := context.WithValue(context.Background(), callerKey{}, i)
			if a.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, a.deadline)
				defer cancel()
			}
			v, err := troupe.Do(ctx, st, i)
			mu.Lock()
			rec.outs[i], rec.rets[i] = outcome{v: v, err: classify(err)}, time.Since(t0)
			mu.Unlock()
		})
	}
	wg.Wait()
	synctest.Wait() // a detached hedge the last outcome left behind may be starting
	work.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := st.Close(ctx); err != nil {
		return rec, fmt.Errorf("close: %w", err)
	}
	sortCalls(rec.calls)
	return rec, nil
}
