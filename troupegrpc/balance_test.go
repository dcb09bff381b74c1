package troupegrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupegrpc"
	"github.com/troupe-go/troupe/troupetest"
)

type (
	call   = *troupegrpc.Call
	result = troupegrpc.Result
)

// backend is a loopback gRPC server standing for one backend of a
// service: by default it answers a unary call with its name and the
// request, and a server stream with three messages; it records the
// requests it got, in arrival order.
type backend struct {
	name, addr string
	e          *echo

	mu  sync.Mutex
	got []string // guarded by mu
}

// newBackend starts a backend; unary, when not nil, answers its unary
// calls instead of the default (after the request is recorded).
func newBackend(t *testing.T, name string, unary func(ctx context.Context, in string) (string, error)) *backend {
	t.Helper()
	b := &backend{name: name}
	if unary == nil {
		unary = func(_ context.Context, in string) (string, error) { return name + ": " + in, nil }
	}
	b.e = &echo{
		unary: func(ctx context.Context, _ int32, in string) (string, error) {
			b.record(in)
			return unary(ctx, in)
		},
		stream: func(_ int32, ss grpc.ServerStream) error {
			in, err := recv(ss)
			if err != nil {
				return err
			}
			b.record(in)
			if unary != nil {
				if _, err := unary(ss.Context(), in); err != nil {
					return err
				}
			}
			for i := range 3 {
				if err := send(ss, fmt.Sprintf("%s: %s %d", name, in, i)); err != nil {
					return err
				}
			}
			return nil
		},
	}
	b.addr = serve(t, b.e)
	return b
}

func (b *backend) record(in string) {
	b.mu.Lock()
	b.got = append(b.got, in)
	b.mu.Unlock()
}

// received returns the requests the backend got.
func (b *backend) received() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.got...)
}

// unavailable is a backend's unary function that fails every call.
func unavailable(context.Context, string) (string, error) {
	return "", status.Error(codes.Unavailable, "down")
}

// backendSet is a balancer whose endpoints are connections, one per
// backend address, each a supervised pipeline of the stack perBackend
// builds over InvokeOn (troupegrpc.Endpoints), inserted and removed
// through a discovery channel; and Conn over a stack outside the balancer.
type backendSet struct {
	bal   *balance.Balancer[string, call, result]
	ch    chan balance.Change[string, call, result]
	build func(string) (troupe.Service[call, result], error)
	cc    grpc.ClientConnInterface

	mu    sync.Mutex
	conns map[string]*grpc.ClientConn // guarded by mu: each address's last connection
}

func newBackendSet(t *testing.T, perBackend func(string) stages.Builder[call, result], outside stages.Builder[call, result], opts ...balance.Option[result]) *backendSet {
	t.Helper()
	sys := troupetest.NewSystem(t)
	s := &backendSet{ch: make(chan balance.Change[string, call, result]), conns: map[string]*grpc.ClientConn{}}
	s.build = troupegrpc.Endpoints(sys, func(addr string) (*grpc.ClientConn, error) {
		cc := dial(t, addr)
		s.mu.Lock()
		s.conns[addr] = cc
		s.mu.Unlock()
		return cc, nil
	}, perBackend)
	bal, err := balance.New(balance.Channel(s.ch), opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, bal.Close(ctx))
	})
	s.bal = bal
	st, err := outside.Build(sys, bal)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close(context.Background())) })
	s.cc = troupegrpc.Conn(st)
	return s
}

// insert adds an endpoint for each address, owned by the balancer.
func (s *backendSet) insert(t *testing.T, addrs ...string) {
	t.Helper()
	for _, addr := range addrs {
		svc, err := s.build(addr)
		require.NoError(t, err)
		s.ch <- balance.Change[string, call, result]{Op: balance.Insert, Key: addr, Service: svc, Owned: true}
	}
	s.sync()
}

// remove removes addr's endpoint; once it returns, no call picks it.
func (s *backendSet) remove(addr string) {
	s.ch <- balance.Change[string, call, result]{Op: balance.Remove, Key: addr}
	s.sync()
}

// sync returns once the changes sent so far are applied (the source takes
// a change only once the last is applied).
func (s *backendSet) sync() {
	s.ch <- balance.Change[string, call, result]{Op: balance.Remove, Key: "none"}
}

// conn returns addr's connection.
func (s *backendSet) conn(addr string) *grpc.ClientConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[addr]
}

// stats returns the balancer's view of each endpoint, by address.
func (s *backendSet) stats() map[string]balance.EndpointStats[string] {
	out := map[string]balance.EndpointStats[string]{}
	for _, st := range s.bal.Stats() {
		out[st.Key] = st
	}
	return out
}

// unaryOn calls Unary on cc with in.
func unaryOn(ctx context.Context, cc grpc.ClientConnInterface, in string, opts ...grpc.CallOption) (string, error) {
	out := new(wrapperspb.StringValue)
	err := cc.Invoke(ctx, mUnary, wrapperspb.String(in), out, opts...)
	return out.GetValue(), err
}

// retryOutside is the stack outside the balancer: a timeout, and a retry
// of UNAVAILABLE and DEADLINE_EXCEEDED (a Timeout's inside the balancer)
// with no backoff.
func retryOutside() stages.Builder[call, result] {
	p := troupegrpc.RetryPolicy(3, nil)
	p.Retryable = troupegrpc.RetryOn(codes.Unavailable, codes.DeadlineExceeded)
	return stages.Stack[call, result]().Timeout(10 * time.Second).Layer(retry.Layer[call, result](p))
}

// freshFirst makes a fresh endpoint's round-trip estimate 1 µs, below any
// loopback round trip: each backend is tried as soon as it is drawn, so
// the bad one is tried within the first calls, whatever the draws.
var freshFirst = balance.PeakEWMA(balance.DefaultDecay, time.Microsecond)

// untilTried makes calls through s, named prefix-0, prefix-1, ..., each
// answered by one of the backends in ok, until the bad backend has got a
// call (at most 1000 calls), then 30 more; it returns how many it made.
func (s *backendSet) untilTried(t *testing.T, prefix string, bad *backend, ok ...*backend) int {
	t.Helper()
	names := map[string]bool{}
	for _, b := range ok {
		names[b.name] = true
	}
	n, after := 0, 30
	for ; after > 0; n++ {
		require.Less(t, n, 1000, "the bad backend was never tried")
		in := prefix + "-" + strconv.Itoa(n)
		out, err := unaryOn(t.Context(), s.cc, in)
		require.NoError(t, err, "call %s", in)
		name, rest, _ := strings.Cut(out, ": ")
		require.True(t, names[name], "call %s answered by %q", in, out)
		require.Equal(t, in, rest)
		if len(bad.received()) > 0 {
			after--
		}
	}
	return n
}

// assertAnsweredElsewhere checks that every call the bad backend got was
// answered by another backend.
func assertAnsweredElsewhere(t *testing.T, bad *backend, ok ...*backend) {
	t.Helper()
	answered := map[string]bool{}
	for _, b := range ok {
		for _, in := range b.received() {
			answered[in] = true
		}
	}
	for _, in := range bad.received() {
		assert.True(t, answered[in], "call %s was not retried at another backend", in)
	}
}

// InvokeOn sends on its own connection, under an interceptor on another
// (whose invoker it does not use) as under Conn, which has none; under
// Conn a stack whose leaf is Invoke has nothing to send on.
//
// spec: BAL3
func TestInvokeOnSendsEachCallOnItsOwnConnection(t *testing.T) {
	front, target := newBackend(t, "front", nil), newBackend(t, "target", nil)
	sys := troupetest.NewSystem(t)
	onTarget, err := stack().Build(sys, troupegrpc.InvokeOn(dial(t, target.addr)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = onTarget.Close(context.Background()) })

	var p peer.Peer
	out, err := unary(t.Context(), through(t, front.addr, onTarget), "x", grpc.Peer(&p))
	require.NoError(t, err)
	assert.Equal(t, "target: x", out)
	assert.Equal(t, target.addr, p.Addr.String(), "the caller's options get the attempt's")
	out, err = unaryOn(t.Context(), troupegrpc.Conn(onTarget), "y")
	require.NoError(t, err)
	assert.Equal(t, "target: y", out)
	s, err := troupegrpc.Conn(onTarget).NewStream(t.Context(), serverDesc, mServer)
	require.NoError(t, err)
	require.NoError(t, send(s, "z"))
	require.NoError(t, s.CloseSend())
	got, err := recvAll(s)
	require.Equal(t, io.EOF, err)
	assert.Equal(t, []string{"target: z 0", "target: z 1", "target: z 2"}, got)
	assert.Empty(t, front.received())

	onNothing := build(t, stack())
	_, err = unaryOn(t.Context(), troupegrpc.Conn(onNothing), "x")
	require.ErrorIs(t, err, troupegrpc.ErrNoConn)
	assert.Equal(t, codes.Internal, status.Code(err))
	_, err = troupegrpc.Conn(onNothing).NewStream(t.Context(), serverDesc, mServer)
	require.ErrorIs(t, err, troupegrpc.ErrNoConn)

	_, err = stack().Build(sys, troupegrpc.InvokeOn(nil))
	troupetest.BadOption(t, err, "troupegrpc.InvokeOn", "the connection")
}

// Calls through a balancer of three backends, each an endpoint of a
// concurrency limit of one: three calls at once go one to each backend;
// one after another, they spread over the three.
//
// spec: BAL3
func TestABalancerOfConnectionsSpreadsTheCallsOverTheBackends(t *testing.T) {
	arrived, release := make(chan string, 3), make(chan struct{})
	var bs []*backend
	for _, name := range []string{"a", "b", "c"} {
		bs = append(bs, newBackend(t, name, func(_ context.Context, in string) (string, error) {
			if in == "held" {
				arrived <- name
				<-release
			}
			return name + ": " + in, nil
		}))
	}
	s := newBackendSet(t, func(string) stages.Builder[call, result] { return stages.Stack[call, result]().Limit(1) },
		retryOutside(), balance.PendingRequests(), balance.WithSource(rand.NewPCG(1, 2)))
	s.insert(t, bs[0].addr, bs[1].addr, bs[2].addr)

	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			_, err := unaryOn(t.Context(), s.cc, "held")
			assert.NoError(t, err)
		})
	}
	var where []string
	for range 3 {
		where = append(where, waitFor(t, arrived, "a held call"))
	}
	assert.ElementsMatch(t, []string{"a", "b", "c"}, where, "one call at each backend")
	close(release)
	wg.Wait()

	// One after another, over endpoints whose limit has room (each is
	// ready again at once): each call goes to one of the pair drawn, all
	// equally loaded.
	s = newBackendSet(t, func(string) stages.Builder[call, result] { return stages.Stack[call, result]().Limit(8) },
		retryOutside(), balance.PendingRequests(), balance.WithSource(rand.NewPCG(1, 2)))
	s.insert(t, bs[0].addr, bs[1].addr, bs[2].addr)
	const calls = 300
	for i := range calls {
		_, err := unaryOn(t.Context(), s.cc, strconv.Itoa(i))
		require.NoError(t, err)
	}
	for _, b := range bs {
		n := len(b.received()) - 1 // less the held call
		t.Logf("%s: %d calls", b.name, n)
		assert.Greater(t, n, calls/5, "backend %s", b.name)
	}
}

// One backend of three answers UNAVAILABLE to every call: a Retry outside
// the balancer sends each retry to another backend, so no call fails, and
// the failing backend is tried about once a cooldown.
//
// spec: BAL3
func TestARetryOutsideTheBalancerSendsTheRetryToAnotherBackendWhenOneFails(t *testing.T) {
	a, b := newBackend(t, "a", nil), newBackend(t, "b", nil)
	down := newBackend(t, "down", unavailable)
	s := newBackendSet(t, func(string) stages.Builder[call, result] { return stages.Stack[call, result]().Limit(8) },
		retryOutside(), freshFirst, balance.FailureCooldown(time.Minute))
	s.insert(t, a.addr, b.addr, down.addr)

	n := s.untilTried(t, "call", down, a, b)
	st := s.stats()[down.addr]
	t.Logf("%d calls; the failing backend: %+v", n, st)
	assert.Len(t, down.received(), 1, "tried once: then it lost every pair for the cooldown")
	assert.True(t, st.Failing)
	assertAnsweredElsewhere(t, down, a, b)
	assert.Len(t, a.received(), n-len(b.received()), "every call was answered once")
}

// One backend of three hangs. A Timeout in each endpoint's pipeline fails
// the attempt that waits for it, and the balancer counts that against the
// backend: the Retry outside (which retries DEADLINE_EXCEEDED) sends the
// retry to another backend, and the one that hangs is tried once a
// cooldown.
//
// spec: BAL3
func TestATimeoutPerBackendAndARetryOutsideTheBalancerLeaveASlowBackend(t *testing.T) {
	a, b := newBackend(t, "a", nil), newBackend(t, "b", nil)
	slow := newBackend(t, "slow", func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done() // until the attempt's deadline cancels it
		return "", ctx.Err()
	})
	s := newBackendSet(t, func(string) stages.Builder[call, result] {
		return stages.Stack[call, result]().Timeout(200 * time.Millisecond).Limit(8)
	}, retryOutside(), freshFirst, balance.FailureCooldown(time.Minute))
	s.insert(t, a.addr, b.addr, slow.addr)

	n := s.untilTried(t, "call", slow, a, b)
	st := s.stats()[slow.addr]
	t.Logf("%d calls; the slow backend: %+v", n, st)
	assert.Len(t, slow.received(), 1, "tried once: then it lost every pair for the cooldown")
	assert.True(t, st.Failing)
	assert.Greater(t, st.RTT, 100*time.Millisecond, "its round trip counts, the timeout's (200 ms, decaying since)")
	assertAnsweredElsewhere(t, slow, a, b)
}

// A stream through the balancer: its first attempt, at a backend that
// answers with a status alone, is retried at another backend, where the
// stream then lives, holding its endpoint (counted in its load) until it
// ends.
//
// spec: BAL3
func TestAStreamThroughTheBalancerIsRetriedAtAnotherBackendAndHoldsItsEndpoint(t *testing.T) {
	ok := newBackend(t, "ok", nil)
	down := newBackend(t, "down", unavailable)
	failed, gate := make(chan struct{}, 1), make(chan struct{})
	outside := stages.Stack[call, result]().Layer(retry.Layer[call, result](gatedRetry{
		Policy: troupegrpc.RetryPolicy(3, nil), failed: failed, gate: gate,
	}))
	// A limit per backend: an endpoint is ready as soon as it is inserted.
	perBackend := func(string) stages.Builder[call, result] { return stages.Stack[call, result]().Limit(8) }
	s := newBackendSet(t, perBackend, outside, balance.PendingRequests(), balance.FailureCooldown(time.Minute))
	s.insert(t, down.addr) // alone: the stream's first attempt goes there
	later, err := s.build(ok.addr)
	require.NoError(t, err)
	go func() {
		<-failed // the first attempt failed: the retry waits at the gate
		s.ch <- balance.Change[string, call, result]{Op: balance.Insert, Key: ok.addr, Service: later, Owned: true}
		s.sync()
		close(gate)
	}()
	st, err := s.cc.NewStream(t.Context(), serverDesc, mServer)
	require.NoError(t, err)
	require.NoError(t, send(st, "x"))
	require.NoError(t, st.CloseSend())
	first, err := recv(st)
	require.NoError(t, err)
	assert.Equal(t, "ok: x 0", first)
	assert.Equal(t, 1, s.stats()[ok.addr].Pending, "the open stream holds its endpoint")
	rest, err := recvAll(st)
	require.Equal(t, io.EOF, err)
	assert.Equal(t, []string{"ok: x 1", "ok: x 2"}, rest)
	assert.Equal(t, []string{"x"}, down.received())
	assert.Equal(t, []string{"x"}, ok.received())
	require.Eventually(t, func() bool { return s.stats()[ok.addr].Pending == 0 }, 10*time.Second, time.Millisecond,
		"the stream's end gives its endpoint back")
}

// gatedRetry is troupegrpc's retry policy whose retries wait at gate,
// saying on failed (when it has room) that one does.
type gatedRetry struct {
	troupegrpc.Policy
	failed chan<- struct{}
	gate   <-chan struct{}
}

func (g *gatedRetry) Retry(req *call, res *result, err *error) (retry.Wait, bool) {
	w, again := g.Policy.Retry(req, res, err)
	if !again {
		return w, false
	}
	select {
	case g.failed <- struct{}{}:
	default:
	}
	return retry.Until(g.gate), true
}

// A backend removed while calls are in flight at it: no new call goes to
// it, its calls in flight are answered, and then its connection is
// closed.
//
// spec: BAL3
func TestARemovedBackendFinishesItsCallsThenItsConnectionCloses(t *testing.T) {
	arrived, release := make(chan string, 3), make(chan struct{})
	old := newBackend(t, "old", func(_ context.Context, in string) (string, error) {
		arrived <- in
		<-release
		return "old: " + in, nil
	})
	b, c := newBackend(t, "b", nil), newBackend(t, "c", nil)
	s := newBackendSet(t, func(string) stages.Builder[call, result] { return stages.Stack[call, result]().Limit(8) }, retryOutside())
	s.insert(t, old.addr)

	type got struct {
		out string
		err error
	}
	outs := make(chan got, 3)
	for i := range 3 {
		go func() {
			out, err := unaryOn(t.Context(), s.cc, "inflight-"+strconv.Itoa(i))
			outs <- got{out, err}
		}()
	}
	for range 3 {
		waitFor(t, arrived, "a call at the old backend")
	}
	s.insert(t, b.addr, c.addr)
	s.remove(old.addr)
	for i := range 20 {
		out, err := unaryOn(t.Context(), s.cc, "new-"+strconv.Itoa(i))
		require.NoError(t, err)
		assert.Regexp(t, "^[bc]: ", out, "a new call goes to the backends in the set")
	}
	assert.Len(t, old.received(), 3)
	oldConn := s.conn(old.addr)
	assert.NotEqual(t, connectivity.Shutdown, oldConn.GetState(), "closed with calls in flight")
	assert.NotContains(t, s.stats(), old.addr)

	close(release)
	for range 3 {
		g := waitFor(t, outs, "a call in flight")
		require.NoError(t, g.err)
		assert.Regexp(t, "^old: inflight-", g.out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for st := oldConn.GetState(); st != connectivity.Shutdown; st = oldConn.GetState() {
		require.True(t, oldConn.WaitForStateChange(ctx, st), "the old backend's connection was not closed")
	}
}

// Endpoints refuses what it cannot build, and closes the connection of an
// endpoint whose stack Build refuses.
//
// spec: BAL3
func TestEndpointsBuildErrors(t *testing.T) {
	sys := troupetest.NewSystem(t)
	_, err := troupegrpc.Endpoints[string](sys, nil, nil)("x")
	troupetest.BadOption(t, err, "troupegrpc.Endpoints", "the dial function")
	dialErr := errors.New("no route")
	_, err = troupegrpc.Endpoints(sys, func(string) (*grpc.ClientConn, error) { return nil, dialErr }, nil)("x")
	require.ErrorIs(t, err, dialErr)
	var cc *grpc.ClientConn
	_, err = troupegrpc.Endpoints(sys, func(addr string) (*grpc.ClientConn, error) {
		cc = dial(t, addr)
		return cc, nil
	}, func(string) stages.Builder[call, result] { return stages.Stack[call, result]().Limit(-1) })(newBackend(t, "a", nil).addr)
	require.ErrorIs(t, err, troupe.ErrBadConfig)
	assert.Equal(t, connectivity.Shutdown, cc.GetState())
}

// waitFor returns what ch gives, failing the test when it gives nothing
// within a generous bound.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}
