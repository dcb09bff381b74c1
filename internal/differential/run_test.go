package differential

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// runModel runs the script through the model.
func runModel(sc *script) record {
	w := &world{sc: sc, attempts: map[int]int{}}
	var entry mstage = mleaf{}
	for i := len(sc.layers) - 1; i >= 0; i-- {
		entry = w.build(sc.layers[i], entry)
	}
	for i, a := range sc.callers {
		c := &mcaller{w: w, id: i, ctx: newCtx(nil)}
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
	rec := record{calls: w.calls}
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
	}
	panic("unknown kind " + l.kind)
}

type fixed time.Duration

func (f fixed) Delay(int) time.Duration { return time.Duration(f) }

// runReal runs the script through troupe, in t's bubble.
func runReal(t *testing.T, sc *script) (rec record, err error) {
	sys := troupetest.NewSystem(t)
	b := stages.Stack[int, int]()
	for _, l := range sc.layers {
		b = l.add(b)
	}
	t0 := time.Now()
	var mu sync.Mutex
	attempts := map[int]int{}
	leaf := actors.Func(func(ctx context.Context, id int) (int, error) {
		mu.Lock()
		n := attempts[id]
		attempts[id]++
		rec.calls = append(rec.calls, call{id: id, n: n, at: time.Since(t0)})
		mu.Unlock()
		st := sc.step(id, n)
		if st.stubborn {
			time.Sleep(st.lat)
		} else {
			tm := time.NewTimer(st.lat)
			select {
			case <-tm.C:
			case <-ctx.Done():
				tm.Stop()
				return 0, ctx.Err()
			}
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
			ctx := context.Background()
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := st.Close(ctx); err != nil {
		return rec, fmt.Errorf("close: %w", err)
	}
	sortCalls(rec.calls)
	return rec, nil
}
