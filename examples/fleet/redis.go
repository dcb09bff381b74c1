package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is the redis-server the fleet starts for itself.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// startRedis starts redis-server on a free loopback port, without
// persistence, and waits until it answers PING.
func startRedis(ctx context.Context) (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redis-server not found: install it (Debian/Ubuntu: apt-get install -y redis-server), or name a Redis with -redis host:port")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", os.TempDir(), "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	rs := &redisServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(rs.done) }()
	if err := rs.waitReady(ctx); err != nil {
		rs.stop()
		return nil, err
	}
	return rs, nil
}

func (rs *redisServer) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: rs.addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for c.Ping(ctx).Err() != nil {
		select {
		case <-rs.done:
			return errors.New("redis-server exited at start (is the port taken? run again)")
		case <-ctx.Done():
			return fmt.Errorf("redis-server did not answer on %s: %w", rs.addr, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// stop stops redis-server and waits for it to exit.
func (rs *redisServer) stop() {
	_ = rs.cmd.Process.Signal(syscall.SIGCONT) // in case it was paused
	_ = rs.cmd.Process.Kill()
	<-rs.done
}

// pause stops redis-server's process (SIGSTOP): it keeps its connections
// and answers nothing, as a Redis that hangs; resume lets it go on.
func (rs *redisServer) pause()  { _ = rs.cmd.Process.Signal(syscall.SIGSTOP) }
func (rs *redisServer) resume() { _ = rs.cmd.Process.Signal(syscall.SIGCONT) }

// outage is when the fleet's redis-server was paused. Safe for
// concurrent use.
type outage struct {
	mu         sync.Mutex
	start, end time.Time // guarded by mu
}

// plan pauses rs at from from now, for d, and returns a function that
// cancels what is yet to come (resuming rs if paused).
func (o *outage) plan(rs *redisServer, from, d time.Duration) (stop func()) {
	var resume *time.Timer
	var mu sync.Mutex // guards resume
	begin := time.AfterFunc(from, func() {
		rs.pause()
		o.mu.Lock()
		o.start = time.Now()
		o.mu.Unlock()
		mu.Lock()
		resume = time.AfterFunc(d, func() {
			rs.resume()
			o.mu.Lock()
			o.end = time.Now()
			o.mu.Unlock()
		})
		mu.Unlock()
	})
	return func() {
		begin.Stop()
		mu.Lock()
		defer mu.Unlock()
		if resume != nil && resume.Stop() {
			rs.resume()
		}
	}
}

// span returns when the outage began and ended; zero times for what did
// not happen.
func (o *outage) span() (start, end time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.start, o.end
}
