package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/troupehttp"
)

// gateway is the ReverseProxy and its stacks, one per backend.
type gateway struct {
	url    string
	sys    *actors.System
	stacks map[string]*troupe.Stack[*http.Request, *http.Response] // by backend name
	stop   func(context.Context)

	retries, sheds sync.Map // backend name -> *atomic.Int64
	mu             sync.Mutex
	changes        []string // breaker changes, in order; guarded by mu
}

// startGateway builds a stack per backend and serves a ReverseProxy that
// routes /orders/... and /catalog/... to them.
func startGateway(cfg config, lg *runLog, backends ...*backend) (*gateway, error) {
	g := &gateway{sys: actors.NewSystem(), stacks: map[string]*troupe.Stack[*http.Request, *http.Response]{}}
	bo, err := backoff.New(5*time.Millisecond, 50*time.Millisecond)
	if err != nil {
		return nil, err
	}
	send := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}
	routes := map[string]http.RoundTripper{} // backend host -> its stack's Transport
	targets := map[string]*url.URL{}         // route prefix -> backend
	for _, b := range backends {
		st, err := stages.Stack[*http.Request, *http.Response]().
			Observe(troupe.ObserverFunc(func(ev troupe.Event) { g.observe(lg, ev) }), b.name).
			LoadShed(loadshed.Capacity(cfg.limit/2)).
			Limit(cfg.limit).
			Breaker(breaker.Classify(troupehttp.IsFailure), breaker.CountWindow(20), breaker.MinCalls(10),
				breaker.FailureRate(0.5), breaker.OpenDelay(cfg.openDelay), breaker.HalfOpenTrials(3)).
			Layer(troupehttp.Retry(2, bo)).
			Timeout(cfg.timeout).
			Build(g.sys, troupehttp.Send(send))
		if err != nil {
			return nil, err
		}
		g.stacks[b.name] = st
		u, _ := url.Parse(b.url)
		routes[u.Host] = troupehttp.Transport(st, troupehttp.HoldUntilBodyClosed())
		targets["/"+b.name+"/"] = u
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			for prefix, u := range targets {
				if strings.HasPrefix(pr.In.URL.Path, prefix) {
					pr.SetURL(u)
					break
				}
			}
			replayable(pr.Out)
		},
		Transport:    router(routes),
		ErrorHandler: troupehttp.ErrorHandler,
		ErrorLog:     log.New(io.Discard, "", 0),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	g.url = "http://" + ln.Addr().String()
	hs := &http.Server{Handler: proxy, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln)
	}()
	g.stop = func(ctx context.Context) {
		_ = hs.Close()
		<-done
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		for _, st := range g.stacks {
			_ = st.Close(ctx)
		}
		send.CloseIdleConnections()
		_ = g.sys.Shutdown(ctx)
	}
	return g, nil
}

// replayable lets the retry stage send again a request that may be sent
// again (troupehttp.IsIdempotent: here, a POST with an Idempotency-Key)
// and has a body: a server's request body can be read once, so the retry
// stage would send it once (troupehttp.CloneRequest); Replayable holds it
// in memory, up to 1 MiB (a longer one is sent once).
func replayable(out *http.Request) {
	if out.Body == nil || !troupehttp.IsIdempotent(out) {
		return
	}
	if r, _ := troupehttp.Replayable(out, 1<<20); r != nil {
		out.Body, out.GetBody, out.ContentLength = r.Body, r.GetBody, r.ContentLength
	}
}

// router sends each request through the Transport of its backend's host;
// a host with none (a request no route matched) is answered 404 here.
type router map[string]http.RoundTripper

func (rt router) RoundTrip(r *http.Request) (*http.Response, error) {
	if t, ok := rt[r.URL.Host]; ok {
		return t.RoundTrip(r)
	}
	if r.Body != nil {
		r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// observe counts the stacks' retries and sheds and logs their breakers'
// changes.
func (g *gateway) observe(lg *runLog, ev troupe.Event) {
	switch {
	case ev.Type == troupe.EventRetried:
		counter(&g.retries, ev.Pipeline).Add(1)
	case ev.Type == troupe.EventShed:
		counter(&g.sheds, ev.Pipeline).Add(1)
	case ev.Type == troupe.EventStateChanged && ev.StageKind == "breaker":
		line := lg.say("%s breaker %s -> %s", ev.Pipeline, ev.From, ev.To)
		g.mu.Lock()
		g.changes = append(g.changes, line)
		g.mu.Unlock()
	}
}

func counter(m *sync.Map, key string) *atomic.Int64 {
	c, _ := m.LoadOrStore(key, new(atomic.Int64))
	return c.(*atomic.Int64)
}

// runLog prints timed lines of the run, one at a time.
type runLog struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func newLog(w io.Writer, start time.Time) *runLog { return &runLog{w: w, start: start} }

// say prints a line and returns it, its time included.
func (l *runLog) say(format string, args ...any) string {
	line := fmt.Sprintf("%6.2fs  %s", time.Since(l.start).Seconds(), fmt.Sprintf(format, args...))
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, line)
	return line
}
