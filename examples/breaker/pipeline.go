package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
)

// pipeline is the client: a troupe stack with a breaker over an
// http.Client.
type pipeline struct {
	sys    *actors.System
	client *http.Client
	stack  *troupe.Stack[int, string]

	mu          sync.Mutex
	transitions []string // guarded by mu
}

// newPipeline builds the stack; say prints a line of the run's log.
func newPipeline(url string, cfg config, say func(string)) (*pipeline, error) {
	p := &pipeline{sys: actors.NewSystem(), client: &http.Client{}}
	fetch := actors.Func(func(ctx context.Context, id int) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/quote/%d", url, id), nil)
		if err != nil {
			return "", err
		}
		resp, err := p.client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("server said %s", resp.Status)
		}
		return string(body), err
	}, "http")
	st, err := stages.Stack[int, string]().
		Breaker(
			breaker.CountWindow(20), breaker.MinCalls(10), breaker.FailureRate(0.5),
			breaker.OpenDelay(cfg.openDelay), breaker.GrowOpenDelay(2, 4*cfg.openDelay),
			breaker.HalfOpenTrials(2),
			breaker.OnStateChange(func(from, to breaker.State) {
				p.mu.Lock()
				p.transitions = append(p.transitions, to.String())
				p.mu.Unlock()
				say(fmt.Sprintf("breaker %v -> %v", from, to))
			})).
		Timeout(cfg.timeout).
		Build(p.sys, fetch)
	if err != nil {
		return nil, err
	}
	p.stack = st
	return p, nil
}

// snapshot is the breaker's state, found in the stack by its name.
func (p *pipeline) snapshot() breaker.Snapshot {
	s, _ := p.stack.Stats("breaker")
	snap, _ := s.Detail.(breaker.Snapshot)
	return snap
}

func (p *pipeline) close(ctx context.Context) {
	_ = p.stack.Close(ctx)
	_ = p.sys.Shutdown(ctx)
	p.client.CloseIdleConnections()
}

// tally counts the outcomes callers saw, by phase.
type tally struct {
	ok, failed, refused [3]atomic.Int64
	serverSeen          [3]int64
	transitions         []string
	lastRefusal         error // an ErrOpen outcome, to show
	mu                  sync.Mutex
}

// drive runs the callers through the three phases and returns what they saw.
func (p *pipeline) drive(ctx context.Context, cfg config, srv *server, log func(string)) *tally {
	t := &tally{}
	var phase atomic.Int32
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range cfg.callers {
		wg.Go(func() {
			for id := c; ; id += cfg.callers {
				select {
				case <-stop:
					return
				default:
				}
				ph := phase.Load()
				_, err := troupe.Do(ctx, p.stack, id)
				switch {
				case err == nil:
					t.ok[ph].Add(1)
				case errors.Is(err, breaker.ErrOpen):
					t.refused[ph].Add(1)
					t.mu.Lock()
					t.lastRefusal = err
					t.mu.Unlock()
				default:
					t.failed[ph].Add(1)
				}
				time.Sleep(cfg.pace) // the callers' own pace, not synchronisation
			}
		})
	}
	time.Sleep(cfg.before)
	srv.setPhase(1)
	phase.Store(1)
	log(fmt.Sprintf("server down for %v", cfg.outage))
	time.Sleep(cfg.outage)
	srv.setPhase(2)
	phase.Store(2)
	log("server is back")
	time.Sleep(cfg.after)
	close(stop)
	wg.Wait()
	for i := range t.serverSeen {
		t.serverSeen[i] = srv.seen[i].Load()
	}
	p.mu.Lock()
	t.transitions = append([]string(nil), p.transitions...)
	p.mu.Unlock()
	return t
}
