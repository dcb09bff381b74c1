package differential

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/mapping"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/spawnready"
	"github.com/troupe-go/troupe/stages/steer"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// runModel runs the script through the model.
func runModel(sc *script) record {
	w := &world{sc: sc, attempts: map[int]int{}}
	w.before = func() { w.by = nil } // an event is another goroutine's unless it says so
	w.setup = true
	entry := w.buildFrom(0, mleaf{})
	w.setup = false
	for i, a := range sc.callers {
		c := &mcaller{w: w, id: i, ctx: &mctx{s: &w.sim}}
		w.callers = append(w.callers, c)
		w.at(a.at, func() { c.call(entry) })
		if a.deadline > 0 {
			c.ctx.dl, c.ctx.hasDL = a.at+a.deadline, true
			w.at(a.at+a.deadline, func() {
				c.ctx.end("deadline")
				c.loop()
			})
		}
	}
	w.run(time.Hour)
	rec := record{calls: w.calls, racy: w.racy, raced: w.raced || w.crossed}
	for _, c := range w.callers {
		if !c.returned {
			c.out, c.retAt = fail("never returned"), -1
		}
		c.out.retryAt = 0
		if sc.http && c.returned {
			c.out = c.response()
		}
		rec.outs = append(rec.outs, c.out)
		rec.rets = append(rec.rets, c.retAt)
	}
	sortCalls(rec.calls)
	return rec
}

// buildFrom builds the stack from layer i down, over the downstream leaf:
// a Steer over copies of the stack below it (the last maybe the downstream
// itself), a balancer whose endpoints are copies of it, each inserted and
// settled in turn.
func (w *world) buildFrom(i int, leaf mleaf) msvc {
	if i == len(w.sc.layers) {
		return leaf
	}
	l := w.sc.layers[i]
	switch l.kind {
	case "mapreq", "mapres", "maperr", "andthen":
		return w.mapping(l.kind, l.d, w.buildFrom(i+1, leaf))
	case "reconnect": // the innermost, over the downstream
		return w.reconnect(l, leaf)
	case "steer":
		s := &msteer{w: w}
		for k := range l.n {
			sub := leaf
			sub.path += fmt.Sprintf("s%d", k)
			if l.bare && k == l.n-1 {
				s.svcs = append(s.svcs, sub)
				continue
			}
			s.svcs = append(s.svcs, w.buildFrom(i+1, sub))
		}
		return s
	case "balance":
		b := w.balancer(l)
		for k, e := range l.eps {
			sub := leaf
			sub.path += fmt.Sprintf("b%d", k)
			sub.extra += e.extra
			sub.failing = sub.failing || e.failing
			ep := b.insert(w.buildFrom(i+1, sub))
			w.run(0)
			if e.removeAt > 0 {
				w.at(e.removeAt, func() { b.remove(ep) })
			}
		}
		return b
	}
	return w.build(l, w.buildFrom(i+1, leaf))
}

func (w *world) build(l layer, s msvc) mstage {
	if l.kind == "spawnready" {
		return w.spawnready(l.n, s) // over any service, through Adapt
	}
	inner := w.asInner(s)
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
	case "abandon":
		return w.abandon(l.d, inner)
	case "adaptive":
		if !enableAdaptiveKeep {
			return w.limitNoKeep(l.n, inner)
		}
		b := w.limit(l.n, inner).(*mbox)
		b.afterFirst = true // its first request reports the starting limit on the actor
		b.watchQueued = true
		return b
	}
	panic("unknown kind " + l.kind)
}

// call is troupe.Do: the request reserves a slot of the outermost stage
// (waiting in its line) and goes; a LoadShed outermost sheds instead.
func (c *mcaller) call(entry msvc) {
	r := &mreq{c: c, ctx: c.ctx, id: c.id}
	switch s := entry.(type) {
	case *mshed:
		if !s.admit() {
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
		if s.tryReserve() {
			s.send(r, c.deliver)
			return
		}
		if s.gate != nil && s.gate(r.ctx) {
			c.deliver(fail("limited/deadline")) // refused at once, not in line
			return
		}
		if s.reserveAsync(w) {
			s.send(r, c.deliver)
			return
		}
		c.inLine = func() { s.cancelWait(w) }
	case mstage:
		s.send(r, c.deliver)
	default:
		// A service that is not a stage: its one-step path, on the
		// caller's goroutine, which is the caller's outcome as it returns.
		c.inCall = true
		c.oneStep(s, r, func(o outcome) {
			c.inCall = false
			c.answered, c.out, c.gone = true, o, "callergone"
			c.ret()
		})
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
	case errors.Is(err, reconnect.ErrConnect) && errors.Is(err, errRefused):
		return "connect"
	case errors.Is(err, errBadRequest):
		return "badreq"
	case errors.Is(err, errBadResponse):
		return "badres"
	case errors.Is(err, errMapped):
		return "mapped"
	case errors.Is(err, steer.ErrNoRoute):
		return "noroute"
	case errors.Is(err, balance.ErrNoneReady):
		if errors.Is(err, context.DeadlineExceeded) {
			return "noneready/deadline"
		}
		return "noneready/canceled"
	case errors.Is(err, retry.ErrSessionOver):
		return "sessionover"
	case errors.Is(err, stagekit.ErrCallerGone):
		return "callergone"
	case errors.Is(err, ratelimit.ErrLimited):
		if errors.Is(err, context.DeadlineExceeded) {
			return "limited/deadline"
		}
		return "limited"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "unknown: " + err.Error()
}

func (l layer) add(b stages.Builder[int, int], work *atomic.Int64) stages.Builder[int, int] {
	switch l.kind {
	case "mapreq", "mapres", "maperr", "andthen":
		return b.Layer(mapLayer(l, work))
	}
	return addLayer(l, b, func(id int) int { return id })
}

// addLayer adds stage l to a stack of requests of any type, each from the
// caller idOf names.
func addLayer[Req any](l layer, b stages.Builder[Req, int], idOf func(Req) int) stages.Builder[Req, int] {
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
		return b.Filter(func(r Req) (Req, error) {
			if rejects(idOf(r)) {
				return r, errors.New("odd one out")
			}
			return r, nil
		})
	case "fallback":
		return b.Fallback(func(_ context.Context, r Req, _ error) (int, error) { return -idOf(r), nil })
	case "hedge":
		return b.Hedge(hedge.Delay(l.d), hedge.NoBudget())
	case "breaker":
		return b.Breaker(breaker.CountWindow(l.n), breaker.MinCalls(l.min), breaker.HalfOpenTrials(l.k), breaker.OpenDelay(l.d))
	case "asyncfilter":
		var mu sync.Mutex
		checks := map[int]int{}
		return b.AsyncFilter(func(ctx context.Context, r Req) (Req, error) {
			id := idOf(r)
			mu.Lock()
			d := checkTime(l.d, id, checks[id])
			checks[id]++
			mu.Unlock()
			if err := sleepCtx(ctx, d, id); err != nil {
				return r, err
			}
			if rejects(id) {
				return r, errors.New("odd one out")
			}
			return r, nil
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
	t0 := time.Now()
	var mu sync.Mutex
	var work atomic.Int64 // the downstream's calls under way: work nobody waits for (a lost hedge) may outlive its stack
	attempts := map[int]int{}
	downstream := func(lf mleaf) func(context.Context, int) (int, error) {
		return func(ctx context.Context, id int) (int, error) {
			work.Add(1)
			defer work.Add(-1)
			mu.Lock()
			n := attempts[id]
			attempts[id]++
			rec.calls = append(rec.calls, call{id: id, n: n, at: time.Since(t0), ep: lf.path})
			mu.Unlock()
			st := sc.step(id, n)
			lat := st.lat + lf.extra
			if lf.failing {
				lat = st.lat / 8
			}
			if st.stubborn {
				time.Sleep(lat)
			} else if err := sleepCtx(ctx, lat, id); err != nil {
				return 0, err
			}
			switch {
			case lf.failing || st.kind == stepErr:
				return 0, errLeaf
			case st.kind == stepPanic:
				panic("the downstream panicked")
			}
			return id*100 + n, nil
		}
	}
	leaf := func(lf mleaf) *actors.FuncService[int, int] { return actors.Func(downstream(lf)) }
	h := &realStacks{sc: sc, sys: sys, leaf: leaf, t0: t0, work: &work, note: func(c call) {
		mu.Lock()
		defer mu.Unlock()
		rec.calls = append(rec.calls, c)
	}}
	var st *troupe.Stack[int, int]
	var server http.Handler
	if sc.http {
		server, err = h.buildServer(downstream(mleaf{}))
	} else {
		st, err = h.build(0, mleaf{})
	}
	defer func() {
		// Closed outermost first, each draining into the ones inside it.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for i := len(h.closers) - 1; i >= 0; i-- {
			if cerr := h.closers[i].Close(ctx); cerr != nil && err == nil {
				err = fmt.Errorf("close: %w", cerr)
			}
		}
	}()
	if err != nil {
		return rec, err
	}
	var removals sync.WaitGroup
	for _, r := range h.removals {
		removals.Go(func() {
			time.Sleep(r.at)
			r.remove()
		})
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
			var o outcome
			if server != nil {
				o = serveOne(ctx, server, i)
			} else {
				v, err := troupe.Do(ctx, st, i)
				o = outcome{v: v, err: classify(err)}
			}
			mu.Lock()
			rec.outs[i], rec.rets[i] = o, time.Since(t0)
			mu.Unlock()
		})
	}
	wg.Wait()
	removals.Wait()
	for synctest.Wait(); work.Load() > 0 || h.connecting(); synctest.Wait() { // a detached hedge the last outcome left behind may be starting; a dial may come
		time.Sleep(time.Millisecond)
	}
	if err := h.check(); err != nil {
		return rec, err
	}
	rec.picks = h.picks
	for _, p := range h.leafEps {
		for _, c := range rec.calls {
			if c.ep == p.ep {
				p.at = c.at
				rec.picks = append(rec.picks, p)
			}
		}
	}
	sortCalls(rec.calls)
	return rec, nil
}

// realStacks builds a script's stacks: a stack of stages down to the
// first Steer or balancer, whose services are stacks built the same way.
type realStacks struct {
	sc       *script
	sys      *actors.System
	leaf     func(mleaf) *actors.FuncService[int, int]
	t0       time.Time
	work     *atomic.Int64
	closers  []troupe.Closer // in the order built: the inner ones first
	removals []removal
	bals     []*balance.Balancer[int, int, int]
	mu       sync.Mutex
	picks    []pick     // picks of endpoints that are removed (see reserveRecorder)
	leafEps  []pick     // endpoints removed that are the downstream itself: their calls are their picks
	note     func(call) // records a call (a Reconnect's dial)
	hosts    int        // made for Reconnects
	recs     []*reconnect.Reconnect[int, int]
}

// pick is a balancer's pick of endpoint ep, removed at removedAt.
type pick struct {
	ep            string
	at, removedAt time.Duration
}

// reserveRecorder is an endpoint that notes each Reserve on it: the
// balancer reserves on an endpoint again as soon as it picked it (on the
// picking goroutine, or on the endpoint's watcher at once), and only then.
type reserveRecorder struct {
	troupe.Service[int, int]
	note func()
}

func (r reserveRecorder) Reserve(ctx context.Context) (*troupe.Permit[int, int], error) {
	r.note()
	return r.Service.Reserve(ctx)
}

// check checks that no balancer (but those below another) has a call in
// flight.
func (h *realStacks) check() error {
	for _, b := range h.bals {
		for _, s := range b.Stats() {
			if s.Pending != 0 {
				return fmt.Errorf("endpoint %v has %d calls in flight once every caller has its outcome", s.Key, s.Pending)
			}
		}
	}
	return nil
}

type removal struct {
	at     time.Duration
	remove func()
}

// build builds the stack from layer i down, over the downstream lf.
func (h *realStacks) build(i int, lf mleaf) (*troupe.Stack[int, int], error) {
	layers := h.sc.layers
	j := i
	for j < len(layers) && !multi(layers[j].kind) {
		j++
	}
	var inner troupe.Service[int, int] = h.leaf(lf)
	if j == len(layers) && j > i && layers[j-1].kind == "reconnect" {
		j--
		var err error
		if inner, err = h.reconnect(layers[j], lf); err != nil {
			return nil, err
		}
	}
	if j < len(layers) && multi(layers[j].kind) {
		var err error
		if inner, err = h.multi(j, lf); err != nil {
			return nil, err
		}
	}
	b := stages.Stack[int, int]()
	if *trace && i == 0 {
		b = b.Observe(&tracer{t0: h.t0}, "trace")
	}
	for _, l := range layers[i:j] {
		b = l.add(b, h.work)
	}
	st, err := b.Build(h.sys, inner)
	if err != nil {
		return nil, err
	}
	h.closers = append(h.closers, st)
	return st, nil
}

// multi builds layer j, a Steer or a balancer, over copies of the stack
// below it, as the model's buildFrom does.
func (h *realStacks) multi(j int, lf mleaf) (troupe.Service[int, int], error) {
	l := h.sc.layers[j]
	switch l.kind {
	case "steer":
		var svcs []troupe.Service[int, int]
		for k := range l.n {
			sub := lf
			sub.path += fmt.Sprintf("s%d", k)
			if l.bare && k == l.n-1 {
				svcs = append(svcs, h.leaf(sub))
				continue
			}
			st, err := h.build(j+1, sub)
			if err != nil {
				return nil, err
			}
			svcs = append(svcs, st.Service)
		}
		return steer.New(func(id, n int) int { return h.sc.route(id, n) }, svcs...)
	case "balance":
		delays, err := backoff.New(10*time.Millisecond, time.Second)
		if err != nil {
			return nil, err
		}
		opts := []balance.Option[int]{balance.WithSource(rand.NewPCG(l.seed, l.seed^0x9e3779b97f4a7c15)),
			balance.FailureCooldown(l.cooldown), balance.WithBackoff(delays)}
		if l.ewma {
			opts = append(opts, balance.PeakEWMA(l.decay, balance.DefaultRTT))
		} else {
			opts = append(opts, balance.PendingRequests())
		}
		bal, err := balance.New[int, int, int](nil, opts...)
		if err != nil {
			return nil, err
		}
		for k, e := range l.eps {
			sub := lf
			sub.path += fmt.Sprintf("b%d", k)
			sub.extra += e.extra
			sub.failing = sub.failing || e.failing
			st, err := h.build(j+1, sub)
			if err != nil {
				_ = bal.Close(context.Background())
				return nil, err
			}
			svc := st.Service
			if e.removeAt > 0 {
				p := pick{ep: sub.path, removedAt: e.removeAt}
				if _, ok := svc.(*actors.FuncService[int, int]); ok {
					// A wrapper would make it an endpoint not always ready:
					// its calls are its picks, unless the permit came from a
					// cache of another balancer, taken before the removal.
					if !strings.Contains(lf.path, "b") {
						h.leafEps = append(h.leafEps, p)
					}
				} else {
					svc = reserveRecorder{Service: svc, note: func() {
						h.mu.Lock()
						defer h.mu.Unlock()
						p.at = time.Since(h.t0)
						h.picks = append(h.picks, p)
					}}
				}
			}
			bal.Insert(k, svc)
			synctest.Wait() // settled, as the model's is, before the next comes
			if e.removeAt > 0 {
				h.removals = append(h.removals, removal{at: e.removeAt, remove: func() { bal.Remove(k) }})
			}
		}
		h.closers = append(h.closers, bal)
		if !strings.Contains(lf.path, "b") {
			// (Below another balancer, the permit that one keeps ready is a
			// call in flight of this one's.)
			h.bals = append(h.bals, bal)
		}
		return bal, nil
	}
	panic("not a multi kind: " + l.kind)
}

// The mapping layers' errors, and the type a mapreq's request is in
// between.
var (
	errBadRequest  = errors.New("the request does not convert")
	errBadResponse = errors.New("the response does not convert")
	errMapped      = errors.New("the downstream's error, mapped")
)

type wreq struct{ id int }

// mapLayer is layer l, a mapping kind, as the model's mmap says.
func mapLayer(l layer, work *atomic.Int64) troupe.Layer[int, int] {
	switch l.kind {
	case "mapreq": // int to wreq and back
		return troupe.LayerFunc[int, int](func(_ troupe.Host, inner troupe.Service[int, int]) (troupe.Service[int, int], error) {
			in, err := mapping.Request(inner, func(_ context.Context, r wreq) (int, error) { return r.id, nil })
			if err != nil {
				return nil, err
			}
			var mu sync.Mutex
			convs := map[int]int{}
			return mapping.Request(in, func(_ context.Context, id int) (wreq, error) {
				mu.Lock()
				k := convs[id]
				convs[id]++
				mu.Unlock()
				if k == 0 && id%3 == 1 {
					return wreq{}, errBadRequest
				}
				return wreq{id: id}, nil
			})
		})
	case "mapres": // int to string and back
		return troupe.LayerFunc[int, int](func(_ troupe.Host, inner troupe.Service[int, int]) (troupe.Service[int, int], error) {
			s, err := mapping.Response(inner, func(v int) (string, error) { return strconv.Itoa(v), nil })
			if err != nil {
				return nil, err
			}
			return mapping.Response(s, func(r string) (int, error) {
				v, err := strconv.Atoi(r)
				switch {
				case err != nil:
					return 0, err
				case v%100 == 1:
					return 0, errBadResponse
				}
				return v + 1000, nil
			})
		})
	case "maperr":
		return mapping.ErrLayer[int, int](func(err error) error {
			if errors.Is(err, errLeaf) {
				return errMapped
			}
			return nil
		})
	case "andthen":
		return mapping.AndThenLayer[int, int](func(ctx context.Context, v int) (int, error) {
			work.Add(1) // a lost hedge's may outlive its stack, as the downstream's
			defer work.Add(-1)
			id, ok := ctx.Value(callerKey{}).(int)
			if !ok {
				panic("no caller in the call's context")
			}
			if err := sleepCtx(ctx, l.d, id); err != nil {
				return 0, err
			}
			return v + 10000, nil
		})
	}
	panic("not a mapping kind: " + l.kind)
}
