// Command reconnect shows a Reconnect stage riding out a downstream that
// goes away and comes back. It starts an HTTP server on loopback, sends a
// request every tick through a supervised pipeline (timeout -> reconnect),
// stops the server for a while, starts it again on the same port, and
// prints the connection's lifecycle states as they change.
//
//	go run ./examples/reconnect
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/supervisor"
)

type config struct {
	tick       time.Duration // time between requests
	up, down   time.Duration // how long the server is up first, then down
	after      time.Duration // how long to go on once it is back
	backoffMin time.Duration // the supervisor's first reconnect delay
	backoffMax time.Duration // and its longest
}

func main() {
	var cfg config
	flag.DurationVar(&cfg.tick, "tick", 100*time.Millisecond, "time between requests")
	flag.DurationVar(&cfg.up, "up", time.Second, "how long the server runs before it goes away")
	flag.DurationVar(&cfg.down, "down", 2*time.Second, "how long it stays away")
	flag.DurationVar(&cfg.after, "after", 2*time.Second, "how long to go on once it is back")
	flag.DurationVar(&cfg.backoffMin, "backoff", 200*time.Millisecond, "first reconnect delay (then x1.6)")
	flag.DurationVar(&cfg.backoffMax, "backoff-max", time.Second, "longest reconnect delay")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "reconnect:", err)
		os.Exit(1)
	}
}

// summary is what a run saw.
type summary struct {
	ok, failed int
	states     []reconnect.State
	stats      reconnect.Counters
}

func run(ctx context.Context, w io.Writer, cfg config) error {
	srv, err := listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := srv.addr
	start := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(w, "%6.2fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}

	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	client := &http.Client{}
	defer client.CloseIdleConnections()

	var mu sync.Mutex
	var s summary
	onChange := func(from, to reconnect.State) {
		mu.Lock()
		s.states = append(s.states, to)
		mu.Unlock()
		logf("state: %v -> %v", from, to)
	}
	delays, err := backoff.New(cfg.backoffMin, cfg.backoffMax, backoff.WithMultiplier(1.6))
	if err != nil {
		return err
	}
	var rc *reconnect.Reconnect[string, string]
	p, err := supervisor.New(sys, addr, func(h troupe.Host) (troupe.Service[string, string], error) {
		rc, err = reconnect.New(h, reconnect.Dialer(dialer(client)), addr,
			reconnect.ConnectTimeout(time.Second), reconnect.OnStateChange(onChange))
		if err != nil {
			return nil, err
		}
		return stages.Stack[string, string]().Timeout(time.Second).Build(h, rc)
	}, supervisor.WithBackoff(delays, 100, time.Minute))
	if err != nil {
		return err
	}
	defer p.Close(ctx)

	send := func(n int) {
		out, err := troupe.Do[string, string](ctx, p, fmt.Sprintf("ping %d", n))
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			s.failed++
			logf("request %2d: %v", n, err)
			return
		}
		s.ok++
		logf("request %2d: %s", n, out)
	}
	n := 0
	phase := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); n++ {
			send(n)
			time.Sleep(cfg.tick)
		}
	}
	phase(cfg.up)
	logf("server goes away")
	srv.stop()
	phase(cfg.down)
	if srv, err = listen(addr); err != nil {
		return err
	}
	defer srv.stop()
	logf("server is back on %s", addr)
	phase(cfg.after)

	s.stats = rc.Counters()
	fmt.Fprintf(w, "summary: %d ok, %d failed; states %v; %d connects, %d failures, %d restarts\n",
		s.ok, s.failed, joinStates(s.states), s.stats.Connects, s.stats.Failures, s.stats.Restarts)
	if s.ok == 0 || s.stats.Connects < 2 {
		return errors.New("the pipeline did not reconnect")
	}
	return nil
}

func joinStates(ss []reconnect.State) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.String()
	}
	return strings.Join(parts, ",")
}

// dialer connects to addr: it checks the server answers /health, and
// returns a service that calls /echo there.
func dialer(client *http.Client) func(ctx context.Context, addr string) (troupe.Service[string, string], error) {
	return func(ctx context.Context, addr string) (troupe.Service[string, string], error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/health", nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		return newConn(client, addr), nil
	}
}

// server is the downstream: an HTTP server on loopback that can be stopped
// and started again on the same address.
type server struct {
	addr string
	srv  *http.Server
	done chan struct{}
	hits atomic.Int64
}

func listen(addr string) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &server{addr: ln.Addr().String(), done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "pong (%s)", strings.TrimPrefix(string(body), "ping "))
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

func (s *server) stop() {
	_ = s.srv.Close()
	<-s.done
}
