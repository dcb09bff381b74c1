package redisquota_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/redisquota"
)

// installHint is what a test that needs redis-server says when it is
// missing.
const installHint = "redis-server not found: install it (Debian/Ubuntu: apt-get install -y redis-server) to run the tests against a real Redis"

// redisServer is a real redis-server on a free loopback port, started by a
// test and stopped with it. It is safe for concurrent use.
type redisServer struct {
	t    testing.TB
	bin  string
	port int
	addr string
	args []string // given to startRedis, after the defaults (so they win)

	mu   sync.Mutex
	cmd  *exec.Cmd     // guarded by mu; nil while stopped
	done chan struct{} // guarded by mu; closed when cmd has exited
}

// startRedis starts redis-server for t, with args after the tests'
// defaults (no persistence), or skips t when it is not installed. It is
// stopped when t ends.
func startRedis(t testing.TB, args ...string) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip(installHint)
	}
	var last error
	for range 3 { // a free port may be taken before redis-server binds it
		r := &redisServer{t: t, bin: bin, port: freePort(t), args: args}
		r.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port))
		if last = r.start(); last == nil {
			t.Cleanup(r.stop)
			return r
		}
	}
	t.Fatalf("redis-server did not start: %v", last)
	return nil
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

// start starts the server (again) on its port and waits until it answers
// PING.
func (r *redisServer) start() error {
	args := []string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", os.TempDir(), "--loglevel", "warning"}
	args = append(args, r.args...)
	if debugCommandOption() {
		args = append(args, "--enable-debug-command", "yes") // DEBUG SLEEP, for the pause tests
	}
	cmd := exec.Command(r.bin, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	r.mu.Lock()
	r.cmd, r.done = cmd, done
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := c.Ping(ctx).Err(); err == nil {
			return nil
		}
		select {
		case <-done:
			r.clear()
			return errors.New("redis-server exited at start")
		case <-ctx.Done():
			r.stop()
			return fmt.Errorf("redis-server did not answer PING on %s", r.addr)
		case <-tick.C:
		}
	}
}

// debugCommandOption reports whether redis-server knows the
// enable-debug-command option (Redis 7 and later, where DEBUG is refused
// without it).
var debugCommandOption = sync.OnceValue(func() bool {
	out, err := exec.Command("redis-server", "--version").Output()
	if err != nil {
		return false
	}
	m := regexp.MustCompile(`v=(\d+)\.`).FindSubmatch(out)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(string(m[1]))
	return major >= 7
})

func (r *redisServer) clear() {
	r.mu.Lock()
	r.cmd, r.done = nil, nil
	r.mu.Unlock()
}

// stop stops the server and waits for it to exit. Stopping a stopped
// server does nothing.
func (r *redisServer) stop() {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.cmd, r.done = nil, nil
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // in case it was paused
	_ = cmd.Process.Kill()
	<-done
}

// restart starts the stopped server again on the same port.
func (r *redisServer) restart() {
	r.t.Helper()
	require.NoError(r.t, r.start())
}

// pause stops the server's process (SIGSTOP): it keeps its connections
// but answers nothing, as a Redis that is too slow; resume lets it go on.
func (r *redisServer) pause()  { r.signal(syscall.SIGSTOP) }
func (r *redisServer) resume() { r.signal(syscall.SIGCONT) }

func (r *redisServer) signal(s syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		_ = r.cmd.Process.Signal(s)
	}
}

// client returns a client of the server that honours contexts, closed
// when the test ends.
func (r *redisServer) client(t testing.TB) *redis.Client {
	t.Helper()
	return newClient(t, r.addr)
}

func newClient(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1,
		// A pool this large does not reach go-redis's dial-error state
		// (which probes once a second, on a goroutine that outlives
		// Close by up to a second) during the tests' short outages.
		DialTimeout: 100 * time.Millisecond, PoolSize: 100,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// pauseKind is a way to make Redis stop answering for a while, each as a
// real deployment sees it: its process stopped (SIGSTOP: a host frozen, a
// long GC of a VM), busy in one command (DEBUG SLEEP: a slow script or
// KEYS), or its clients paused (CLIENT PAUSE: a failover's or an
// operator's). Connections stay open throughout; commands sent meanwhile
// run when it resumes.
type pauseKind string

const (
	pauseStop   pauseKind = "sigstop"
	pauseSleep  pauseKind = "debug-sleep"
	pauseClient pauseKind = "client-pause"
)

var pauseKinds = []pauseKind{pauseStop, pauseSleep, pauseClient}

// pauseFor makes the server stop answering for d, in way k, and returns
// at once; the returned channel is closed when the server answers again
// (for DEBUG SLEEP and CLIENT PAUSE, when the pause has ended on the
// server's own clock).
func (r *redisServer) pauseFor(t testing.TB, k pauseKind, d time.Duration) <-chan struct{} {
	t.Helper()
	resumed := make(chan struct{})
	switch k {
	case pauseStop:
		r.pause()
		timer := time.AfterFunc(d, func() { r.resume(); close(resumed) })
		t.Cleanup(func() {
			if timer.Stop() {
				r.resume()
				close(resumed)
			}
		})
	case pauseSleep:
		c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1})
		started := make(chan struct{})
		go func() {
			defer close(resumed)
			defer c.Close()
			close(started)
			_ = c.Do(context.Background(), "DEBUG", "SLEEP", fmt.Sprintf("%.3f", d.Seconds())).Err()
		}()
		<-started
		t.Cleanup(func() { <-resumed })
		// DEBUG SLEEP blocks Redis from the moment it reads it: wait until
		// another client is refused an answer, so the caller's next
		// command is surely behind it.
		waitStalled(t, r.addr)
	case pauseClient:
		c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1})
		defer c.Close()
		require.NoError(t, c.Do(context.Background(), "CLIENT", "PAUSE", d.Milliseconds(), "ALL").Err())
		timer := time.AfterFunc(d, func() { close(resumed) })
		t.Cleanup(func() { timer.Stop() })
	}
	return resumed
}

// waitStalled waits until a PING to addr goes unanswered for 50 ms.
func waitStalled(t testing.TB, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err != nil {
			return
		}
	}
	t.Fatal("redis-server kept answering")
}

// calls returns how many times the server ran command (lower case),
// scripts' calls included (INFO commandstats).
func (r *redisServer) calls(t testing.TB, command string) int {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1})
	defer c.Close()
	info, err := c.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	m := regexp.MustCompile(`cmdstat_` + command + `:calls=(\d+)`).FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// newBudget is redisquota.NewBudget, the budget closed when tb ends (before
// the server stops; its background releases given up after a second).
func newBudget(tb testing.TB, c redis.Scripter, key string, n int, opts ...redisquota.Option) (*redisquota.Budget, error) {
	b, err := redisquota.NewBudget(c, key, n, opts...)
	if err == nil {
		tb.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = b.Close(ctx)
		})
	}
	return b, err
}
