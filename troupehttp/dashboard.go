package troupehttp

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
)

// StatsSource is what a Dashboard reads a stack from: a snapshot of each of
// its stages, outermost first. Every *troupe.Stack has it, whatever its
// request and response types. It must be safe for concurrent use.
type StatsSource interface {
	Stages() []troupe.Stats
}

// Dashboard is an http.Handler serving a live view of the stacks registered
// with it: one self-contained page (its HTML, CSS and script inline, no
// other asset) at GET /, and a stream of server-sent events at GET
// /events, one JSON snapshot a tick, that the page draws. Mount it where
// you like (under a prefix with http.StripPrefix); it answers any other
// path 404 and any method but GET and HEAD 405. It is read-only: no
// request to it changes a stage.
//
// What each stage shows, and where it comes from:
//   - from the stack's Stats, on every tick: in flight (Used) and
//     capacity, queued, waiting, a breaker's state, an adaptive limit, a
//     rate limit's state, and hedges a second (from a hedge's count);
//   - from the Dashboard's Observer, only for a stack built with it
//     (Observe(d.Observer(), name), the name it is registered under):
//     accepted, rejected and failed a second, retries a second, and the
//     latency percentiles p50 and p99 of the requests finished in the tick;
//   - for a balancer (package stages/balance: its Stages method makes it a
//     StatsSource), one card per endpoint, from its Stats: its state
//     ("ready", "busy" while it is reserved on, "failing" in its
//     cooldown, "paused" after a refusal), calls in flight, picks and
//     errors a second (plotted: picks) and its round-trip estimate. An
//     endpoint removed leaves the view at the next tick.
//
// Rates are the differences of cumulative counts over the tick, divided by
// its length. Each stage keeps a short history that the page plots. Every
// name shown is a user string: the page builds its text with textContent,
// and the JSON escapes HTML's special characters.
//
// A Dashboard is safe for concurrent use. Each stream ends when its
// request's context does, or at Close.
type Dashboard struct {
	interval time.Duration
	history  int
	obs      *dashObserver

	mu      sync.Mutex
	stacks  []*dashStack // registered, in order
	last    time.Time    // when the frame below was sampled
	gen     uint64       // counts the samples
	frame   []byte       // the last frame's JSON
	closed  bool
	done    chan struct{} // closed by Close: the streams end
	active  int           // streams running
	drained chan struct{} // made by Close; closed when active is 0
}

// DashboardOption configures a Dashboard. Options are plain values, safe
// for concurrent use.
type DashboardOption func(*dashConfig)

type dashConfig struct {
	interval time.Duration
	history  int
}

// DashboardInterval sets the tick: how often each stream gets a snapshot,
// and the span its rates and percentiles cover. The default is one second;
// it must be positive.
func DashboardInterval(d time.Duration) DashboardOption {
	return func(c *dashConfig) { c.interval = d }
}

// DashboardHistory sets how many ticks each stage's plot covers. The
// default is 60; it must be at least 2.
func DashboardHistory(n int) DashboardOption {
	return func(c *dashConfig) { c.history = n }
}

// NewDashboard returns a Dashboard with no stack registered. A bad option
// is a *troupe.ConfigError (matching troupe.ErrBadConfig).
func NewDashboard(opts ...DashboardOption) (*Dashboard, error) {
	c := dashConfig{interval: time.Second, history: 60}
	for _, o := range opts {
		if o == nil {
			return nil, &troupe.ConfigError{Stage: "troupehttp.NewDashboard", Option: "option", Why: "nil"}
		}
		o(&c)
	}
	if c.interval <= 0 {
		return nil, &troupe.ConfigError{Stage: "troupehttp.NewDashboard", Option: "DashboardInterval", Value: c.interval, Why: "must be positive"}
	}
	if c.history < 2 {
		return nil, &troupe.ConfigError{Stage: "troupehttp.NewDashboard", Option: "DashboardHistory", Value: c.history, Why: "must be at least 2"}
	}
	d := &Dashboard{interval: c.interval, history: c.history, done: make(chan struct{})}
	d.obs = newDashObserver()
	return d, nil
}

// Register adds a stack to the dashboard under name, shown in that order
// after the stacks registered before it. An empty name, one already
// registered, or a nil src is a *troupe.ConfigError. Safe for concurrent
// use, also while the page is open: the next snapshot has the stack.
func (d *Dashboard) Register(name string, src StatsSource) error {
	if name == "" || src == nil {
		return &troupe.ConfigError{Stage: "troupehttp.Dashboard", Option: "Register", Value: name, Why: "needs a name and a stack"}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if slices.ContainsFunc(d.stacks, func(s *dashStack) bool { return s.name == name }) {
		return &troupe.ConfigError{Stage: "troupehttp.Dashboard", Option: "Register", Value: name, Why: "a stack of that name is registered already"}
	}
	d.stacks = append(d.stacks, &dashStack{name: name, src: src, stages: map[string]*dashStage{}})
	d.obs.register(name)
	d.frame = nil // the next stream asks for a new one
	return nil
}

// Observer returns the observer that counts what the stats do not have
// (see Dashboard): attach it to a stack with the name the stack is
// registered under, Observe(d.Observer(), name). Events of pipelines not
// registered are ignored. It is quick and safe for concurrent use.
func (d *Dashboard) Observer() troupe.Observer { return d.obs }

// ServeHTTP serves the page at / and the event stream at /events.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the dashboard is read-only", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case "/", "":
		d.servePage(w, r)
	case "/events":
		d.serveEvents(w, r)
	default:
		http.NotFound(w, r)
	}
}

// Close ends every stream and refuses new ones (503); it waits for the
// streams' handlers to return, or for ctx, whose error it returns then.
// The stacks are not the dashboard's: Close leaves them alone. Closing
// twice is safe.
func (d *Dashboard) Close(ctx context.Context) error {
	d.mu.Lock()
	if !d.closed {
		d.closed = true
		close(d.done)
		d.drained = make(chan struct{})
		if d.active == 0 {
			close(d.drained)
		}
	}
	drained := d.drained
	d.mu.Unlock()
	select {
	case <-drained:
		return nil
	default:
	}
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("troupehttp: Dashboard.Close: %w", ctx.Err())
	}
}

// serveEvents streams a frame now and one every tick until the request's
// context ends or the dashboard closes.
func (d *Dashboard) serveEvents(w http.ResponseWriter, r *http.Request) {
	if !d.enter() {
		http.Error(w, "the dashboard is closed", http.StatusServiceUnavailable)
		return
	}
	defer d.leave()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Method == http.MethodHead {
		return
	}
	rc := http.NewResponseController(w)
	tick := time.NewTicker(d.interval)
	defer tick.Stop()
	for {
		if _, err := fmt.Fprintf(w, "data: %s\n\n", d.sample(time.Now())); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return
		case <-d.done:
			return
		}
		select { // a tick that came with the end does not delay it
		case <-r.Context().Done():
			return
		case <-d.done:
			return
		default:
		}
	}
}

// enter counts a stream in, unless the dashboard is closed.
func (d *Dashboard) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	d.active++
	return true
}

// leave counts a stream out, and tells Close when it was the last.
func (d *Dashboard) leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.active--
	if d.closed && d.active == 0 {
		close(d.drained)
	}
}
