package redisquota_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/redisquota"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// childEnv names the role of a re-executed test binary: a process of the
// fleet that the multi-process tests run.
const childEnv = "REDISQUOTA_TEST_CHILD"

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{}) // go-redis's own log of failed dials, expected in the outage tests
	if role := os.Getenv(childEnv); role != "" {
		if err := runChild(role); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	troupetest.NeedCommand("redis-server", "Debian/Ubuntu: apt-get install -y redis-server")
	troupetest.Main(m)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// childSpec is what a child process is told, through its environment.
type childSpec struct {
	role, redis, url, key string
	rate                  ratelimit.Rate
	budget                int
	ttl, run              time.Duration
	fallback              int // the rate's Fallback(n); 0: fail closed
}

func (c childSpec) env() []string {
	return append(os.Environ(),
		childEnv+"="+c.role, "RQ_REDIS="+c.redis, "RQ_URL="+c.url, "RQ_KEY="+c.key,
		"RQ_NUM="+strconv.Itoa(c.rate.Num), "RQ_PER="+c.rate.Per.String(),
		"RQ_BUDGET="+strconv.Itoa(c.budget), "RQ_TTL="+c.ttl.String(), "RQ_RUN="+c.run.String(),
		"RQ_FALLBACK="+strconv.Itoa(c.fallback))
}

// startChild re-executes the test binary as a child of spec's role.
func startChild(t *testing.T, spec childSpec) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = spec.env()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

func childConfig() (childSpec, error) {
	var c childSpec
	var err error
	c.redis, c.url, c.key = os.Getenv("RQ_REDIS"), os.Getenv("RQ_URL"), os.Getenv("RQ_KEY")
	atoi := func(k string) int {
		n, e := strconv.Atoi(os.Getenv(k))
		if e != nil && err == nil {
			err = e
		}
		return n
	}
	dur := func(k string) time.Duration {
		d, e := time.ParseDuration(os.Getenv(k))
		if e != nil && err == nil {
			err = e
		}
		return d
	}
	c.rate = ratelimit.Rate{Num: atoi("RQ_NUM"), Per: dur("RQ_PER")}
	c.budget, c.ttl, c.run = atoi("RQ_BUDGET"), dur("RQ_TTL"), dur("RQ_RUN")
	c.fallback = atoi("RQ_FALLBACK")
	return c, err
}

// runChild is a child process: "rate" runs a stack with the shared rate
// against the server for a while, as fast as it lets it; "lease" holds
// one lease of the budget, through a stage, until it is killed.
func runChild(role string) error {
	c, err := childConfig()
	if err != nil {
		return err
	}
	rdb := redis.NewClient(&redis.Options{Addr: c.redis, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer rdb.Close()
	sys := actors.NewSystem()
	defer sys.Shutdown(context.Background())
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	switch role {
	case "rate":
		opts := []redisquota.Option{redisquota.Logger(discard())}
		if c.fallback > 0 {
			opts = append(opts, redisquota.OnUnavailable(redisquota.Fallback(c.fallback)))
		}
		lim, err := redisquota.NewLimiter(rdb, c.key, c.rate, opts...)
		if err != nil {
			return err
		}
		st, err := stages.Stack[int, int]().Limit(4).RateLimit(lim.Rate(), ratelimit.Remote(lim)).Build(sys, httpCall(hc, c.url))
		if err != nil {
			return err
		}
		defer st.Close(context.Background())
		hammer(st, c.run)
		return nil
	case "lease":
		b, err := redisquota.NewBudget(rdb, c.key, c.budget, redisquota.LeaseTTL(c.ttl))
		if err != nil {
			return err
		}
		st, err := stages.Stack[int, int]().Layer(redisquota.Layer[int, int](b)).Build(sys, httpCall(hc, c.url))
		if err != nil {
			return err
		}
		_, err = troupe.Do(context.Background(), st, 1) // the server holds it until this process is killed
		return err
	case "budget":
		opts := []redisquota.Option{redisquota.Logger(discard())}
		if c.ttl > 0 {
			opts = append(opts, redisquota.LeaseTTL(c.ttl))
		}
		b, err := redisquota.NewBudget(rdb, c.key, c.budget, opts...)
		if err != nil {
			return err
		}
		defer b.Close(context.Background())
		st, err := stages.Stack[int, int]().Layer(redisquota.Layer[int, int](b)).Build(sys, httpCall(hc, c.url))
		if err != nil {
			return err
		}
		defer st.Close(context.Background())
		ok, failed := persist(st, c.run)
		fmt.Printf("ok %d failed %d\n", ok, failed)
		return nil
	}
	return fmt.Errorf("unknown role %q", role)
}

// persist calls svc from 8 goroutines, one call after another, for d,
// each pausing 10 ms after a failure (as a client that backs off), and
// returns how many calls succeeded and failed.
func persist(svc troupe.Service[int, int], d time.Duration) (ok, failed int) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				_, err := troupe.Do(ctx, svc, i)
				mu.Lock()
				if err == nil {
					ok++
				} else if ctx.Err() == nil {
					failed++
				}
				mu.Unlock()
				if err != nil {
					select {
					case <-ctx.Done():
					case <-time.After(10 * time.Millisecond):
					}
				}
			}
		})
	}
	wg.Wait()
	return ok, failed
}

// hammer calls svc from 8 goroutines, one call after another, for d, and
// returns how many calls succeeded.
func hammer(svc troupe.Service[int, int], d time.Duration) (ok int) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, err := troupe.Do(ctx, svc, i); err == nil {
					mu.Lock()
					ok++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return ok
}
