package spawnready_test

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
)

// goid returns the current goroutine's id, parsed from its stack header
// ("goroutine 42 [running]:").
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	b = b[:bytes.IndexByte(b, ' ')]
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

// reserveCall records one call of pool.Reserve.
type reserveCall struct {
	ctx  context.Context
	goid uint64
}

// pool is a plain troupe.Service (no actors.Inner methods) whose Reserve
// blocks until the test lets one reservation through, like a connection
// pool dialling a connection. It honours its context.
type pool struct {
	ready   chan error // one value per reservation let through: nil, or its error
	permits troupe.PermitSource[int, int]

	mu        sync.Mutex
	calls     []reserveCall // guarded by mu
	cancelled int           // reservations whose context ended; guarded by mu
}

func newPool() *pool { return &pool{ready: make(chan error, 8)} }

func (p *pool) Reserve(ctx context.Context) (*troupe.Permit[int, int], error) {
	p.mu.Lock()
	p.calls = append(p.calls, reserveCall{ctx: ctx, goid: goid()})
	p.mu.Unlock()
	select {
	case err := <-p.ready:
		if err != nil {
			return nil, err
		}
		return p.permits.Issue(conn{}), nil
	case <-ctx.Done():
		p.mu.Lock()
		p.cancelled++
		p.mu.Unlock()
		return nil, ctx.Err()
	}
}

func (p *pool) snapshot() ([]reserveCall, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]reserveCall(nil), p.calls...), p.cancelled
}

// conn is a pooled connection: it multiplies by ten.
type conn struct{}

func (conn) Call(_ context.Context, v int) (int, error) { return v * 10, nil }
func (conn) Release()                                   {}

type result struct {
	v    int
	err  error
	at   time.Duration
	goid uint64
}

func call(ctx context.Context, p *troupe.Permit[int, int], v int) <-chan result {
	ch := make(chan result, 1)
	start := time.Now()
	go func() {
		id := goid()
		out, err := p.Call(ctx, v)
		ch <- result{out, err, time.Since(start), id}
	}()
	return ch
}
