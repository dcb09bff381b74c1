package buffer_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/troupetest"
)

func newBuffer(t *testing.T, h troupe.Host, n int) (*buffer.Buffer[string, string], *troupetest.Handle[string, string]) {
	mock, handle := troupetest.NewMock[string, string]()
	b, err := buffer.New[string, string](h, mock, n)
	require.NoError(t, err)
	return b, handle
}

// spec: B1
func TestB1_CallersShareOnlyABoundedMailbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBuffer(t, troupetest.NewSystem(t), 2)
		ctx := context.Background()
		p1, err := b.Reserve(ctx)
		require.NoError(t, err)
		p2, err := b.Reserve(ctx)
		require.NoError(t, err)
		tctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err = b.Reserve(tctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "reserving reserves a mailbox slot; there are two")
		require.NoError(t, p1.Release())
		require.NoError(t, p2.Release())

		_, err = buffer.New[string, string](nil, actors.Func(func(_ context.Context, s string) (string, error) { return s, nil }), 0)
		troupetest.BadOption(t, err, "buffer", "Buffer")
	})
}

// spec: B2
func TestB2_WorkerAsksInnerReadinessBeforeTakingTheNextMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, troupetest.NewSystem(t), 4)
		ctx := context.Background()
		a := troupetest.Go(ctx, b, "a")
		synctest.Wait()
		c := troupetest.Go(ctx, b, "c")
		synctest.Wait()
		assert.Equal(t, 1, h.Waiting(), "the worker waits for the inner service")
		assert.Equal(t, 1, b.Stats().Queued, "and has not taken the next message")
		assert.Zero(t, h.Calls())

		h.Allow(1)
		req := h.Next(ctx)
		assert.Equal(t, "a", req.Value)
		synctest.Wait()
		assert.Equal(t, 1, h.Waiting(), "c is taken only now, and waits for readiness in turn")
		assert.Equal(t, 0, b.Stats().Queued)
		req.Respond("A")
		h.Allow(1)
		req = h.Next(ctx)
		req.Respond("C")
		assert.Equal(t, troupetest.Result[string]{Value: "A"}, <-a)
		assert.Equal(t, troupetest.Result[string]{Value: "C"}, <-c)
	})
}

// spec: B3
func TestB3_CallerAwaitsTheResponseNotTheWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, troupetest.NewSystem(t), 4)
		ctx := context.Background()
		h.Allow(2)
		a := troupetest.Go(ctx, b, "slow")
		reqA := h.Next(ctx)
		c := troupetest.Go(ctx, b, "fast")
		reqC := h.Next(ctx) // reached the inner service while "slow" is still unanswered
		assert.Equal(t, "fast", reqC.Value)
		synctest.Wait()
		assert.Equal(t, 0, b.Stats().Used, "the worker holds neither request: it moved on")
		reqC.Respond("done fast")
		assert.Equal(t, troupetest.Result[string]{Value: "done fast"}, <-c)
		select {
		case r := <-a:
			t.Fatalf("slow answered early: %v", r)
		default:
		}
		reqA.Respond("done slow")
		assert.Equal(t, troupetest.Result[string]{Value: "done slow"}, <-a)
	})
}

// spec: B4
func TestB4_InnerReadinessErrorClosesTheBufferWithTheCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, troupetest.NewSystem(t), 4)
		ctx := context.Background()
		a := troupetest.Go(ctx, b, "a") // waits for readiness
		synctest.Wait()
		c := troupetest.Go(ctx, b, "c") // queued
		synctest.Wait()
		waiting := make(chan error, 1)
		p1, err := b.Reserve(ctx)
		require.NoError(t, err)
		p2, err := b.Reserve(ctx)
		require.NoError(t, err)
		go func() { _, err := b.Reserve(ctx); waiting <- err }()
		synctest.Wait()

		cause := errors.New("certificate expired")
		h.Break(cause)
		for _, r := range []troupetest.Result[string]{<-a, <-c} {
			assert.ErrorIs(t, r.Err, troupe.ErrClosed)
			assert.ErrorIs(t, r.Err, cause)
		}
		err = <-waiting
		assert.ErrorIs(t, err, troupe.ErrClosed, "a waiting caller")
		assert.ErrorIs(t, err, cause)
		_, err = p1.Call(ctx, "x")
		assert.ErrorIs(t, err, cause, "a caller holding a permit")
		require.NoError(t, p2.Release())
		_, err = b.Reserve(ctx)
		assert.ErrorIs(t, err, cause, "a later caller")
		var ce *troupe.ClosedError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "buffer", ce.Service)
		synctest.Wait()
		assert.Equal(t, 0, b.Stats().Used)
	})
}

// spec: B4
func TestB4_WorkerKilledByPanicsClosesWithThePanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		host, err := sys.NewHost("no-restarts", actors.Intensity(0, time.Minute))
		require.NoError(t, err)
		b, h := newBuffer(t, host, 4)
		h.PanicOnReady("worker bug")
		r := <-troupetest.Go(context.Background(), b, "a")
		assert.ErrorIs(t, r.Err, troupe.ErrRestarted, "the request in hand is answered when the panic is caught")
		assert.ErrorIs(t, r.Err, troupe.ErrPanic)
		synctest.Wait()
		_, err = b.Reserve(context.Background())
		assert.ErrorIs(t, err, troupe.ErrClosed, "the supervisor stopped the worker")
		assert.ErrorIs(t, err, troupe.ErrPanic, "later callers are told what killed the worker")
	})
}

// spec: B4
func TestB4_ClosedBufferSaysItWasClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBuffer(t, troupetest.NewSystem(t), 4)
		require.NoError(t, b.Close(context.Background()))
		_, err := b.Reserve(context.Background())
		var ce *troupe.ClosedError
		require.ErrorAs(t, err, &ce)
		assert.NoError(t, ce.Cause, "closed on purpose: no cause")
	})
}

func ExampleNew() {
	sys := actors.NewSystem()
	defer sys.Shutdown(context.Background())
	upper := actors.Func(func(_ context.Context, s string) (string, error) {
		return s + "!", nil
	})
	b, err := buffer.New[string, string](sys, upper, 16)
	if err != nil {
		panic(err)
	}
	out, err := troupe.Do[string, string](context.Background(), b, "hello")
	fmt.Println(out, err)
	// Output: hello! <nil>
}
