package troupe_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
)

// spec: CORE1
func TestCORE1_ReserveWaitsAndHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := newSystem(t)
		b, _ := newBuffer(t, sys, 1)
		ctx := context.Background()
		p, err := b.Reserve(ctx)
		require.NoError(t, err)

		// Full: reserving waits until the deadline, then returns its error
		// and holds nothing.
		start := time.Now()
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err = b.Reserve(dctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, 1, b.Stats().Used, "the failed reservation holds nothing")
		assert.Equal(t, 0, b.Stats().Waiting)

		// Cancellation by another goroutine ends the wait the same way.
		cctx, ccancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() {
			_, err := b.Reserve(cctx)
			done <- err
		}()
		synctest.Wait()
		assert.Equal(t, 1, b.Stats().Waiting)
		ccancel()
		assert.ErrorIs(t, <-done, context.Canceled)
		assert.Equal(t, 1, b.Stats().Used)

		// A waiter gets the slot as soon as it is released.
		go func() {
			p2, err := b.Reserve(ctx)
			if err == nil {
				err = p2.Release()
			}
			done <- err
		}()
		synctest.Wait()
		require.NoError(t, p.Release())
		assert.NoError(t, <-done)
		assert.Equal(t, 0, b.Stats().Used)
	})
}

// spec: CORE2
func TestCORE2_CallWithoutPermitCannotBeWritten(t *testing.T) {
	// The only method of Service is Reserve: there is nothing to call.
	st := reflect.TypeFor[troupe.Service[int, int]]()
	require.Equal(t, 1, st.NumMethod())
	assert.Equal(t, "Reserve", st.Method(0).Name)

	// And the compiler says so: type-check a program that tries.
	out := compileFails(t, `package misuse

import (
	"context"

	"github.com/troupe-go/troupe"
)

func Misuse(s troupe.Service[int, int]) {
	s.Call(context.Background(), 1)
}
`)
	assert.Contains(t, out, "s.Call undefined")
}

// compileFails type-checks src as package internal/misuse (an overlay: no
// file is written into the module) and returns the compiler's complaints;
// it fails the test when src compiles.
func compileFails(t *testing.T, src string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles a program")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "misuse.go")
	require.NoError(t, os.WriteFile(file, []byte(src), 0o600))
	wd, err := os.Getwd()
	require.NoError(t, err)
	overlay := filepath.Join(dir, "overlay.json")
	target := filepath.Join(wd, "internal", "misuse", "misuse.go")
	require.NoError(t, os.WriteFile(overlay, []byte(`{"Replace":{"`+target+`":"`+file+`"}}`), 0o600))
	out, err := exec.Command(gobin, "build", "-overlay="+overlay, "-gcflags=-e", "-o", os.DevNull, "./internal/misuse").CombinedOutput()
	require.Error(t, err, "the misuse compiled:\n%s", out)
	return string(out)
}

// spec: CORE3
func TestCORE3_PermitUsedAtMostOnce(t *testing.T) {
	sys := newSystem(t)
	b, c := newBuffer(t, sys, 4)
	ctx := context.Background()

	p, err := b.Reserve(ctx)
	require.NoError(t, err)
	v, err := p.Call(ctx, 7)
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	_, err = p.Call(ctx, 8)
	assert.ErrorIs(t, err, troupe.ErrPermitUsed, "second call")
	assert.ErrorIs(t, p.Release(), troupe.ErrPermitUsed, "release after call")
	assert.EqualValues(t, 1, c.calls.Load(), "the second call never reached the inner service")

	p, err = b.Reserve(ctx)
	require.NoError(t, err)
	require.NoError(t, p.Release())
	_, err = p.Call(ctx, 9)
	assert.ErrorIs(t, err, troupe.ErrPermitUsed, "call after release")
	assert.ErrorIs(t, p.Release(), troupe.ErrPermitUsed, "second release")
	assert.EqualValues(t, 1, c.calls.Load())

	var zero troupe.Permit[int, int]
	_, err = zero.Call(ctx, 1)
	assert.ErrorIs(t, err, troupe.ErrInvalidPermit)
	var nilp *troupe.Permit[int, int]
	assert.ErrorIs(t, nilp.Release(), troupe.ErrInvalidPermit)

	// Racing calls on one permit: exactly one wins.
	p, err = b.Reserve(ctx)
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var wins, used int
	for i := range 16 {
		wg.Go(func() {
			_, err := p.Call(ctx, i)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, troupe.ErrPermitUsed):
				used++
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, wins)
	assert.Equal(t, 15, used)
	assert.EqualValues(t, 2, c.calls.Load())
	assert.Equal(t, 0, b.Stats().Used)
}

// spec: CORE5
func TestCORE5_CopyCarriesNoReservation(t *testing.T) {
	sys := newSystem(t)
	b, _ := newBuffer(t, sys, 1)
	ctx := context.Background()
	p, err := b.Reserve(ctx)
	require.NoError(t, err)

	// A copy of the handle shares the stage but holds no reservation: the
	// only slot is still taken, so the copy cannot reserve it.
	cp := *b
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = cp.Reserve(done)
	assert.ErrorIs(t, err, context.Canceled)

	// A copy of the permit is the same reservation: still used once.
	q := *p
	_, err = q.Call(ctx, 1)
	require.NoError(t, err)
	_, err = p.Call(ctx, 1)
	assert.ErrorIs(t, err, troupe.ErrPermitUsed)

	// Once the slot is free, the copy reserves like the original.
	p2, err := cp.Reserve(ctx)
	require.NoError(t, err)
	require.NoError(t, p2.Release())
}

// spec: CORE8
func TestCORE8_DoReservesCallsAndReturns(t *testing.T) {
	sys := newSystem(t)
	b, c := newBuffer(t, sys, 1)
	v, err := troupe.Do[int, int](context.Background(), b, 41)
	require.NoError(t, err)
	assert.Equal(t, 41, v)
	assert.EqualValues(t, 1, c.calls.Load())
	assert.Equal(t, 0, b.Stats().Used)

	require.NoError(t, b.Close(context.Background()))
	_, err = troupe.Do[int, int](context.Background(), b, 1)
	assert.ErrorIs(t, err, troupe.ErrClosed, "a reservation error comes back as is")
}

// spec: CORE9
func TestCORE9_ErrorsAreValues(t *testing.T) {
	cause := errors.New("dial refused")
	closed := error(&troupe.ClosedError{Service: "buffer", Cause: cause})
	assert.ErrorIs(t, closed, troupe.ErrClosed)
	assert.ErrorIs(t, closed, cause)
	var ce *troupe.ClosedError
	require.ErrorAs(t, closed, &ce)
	assert.Equal(t, "buffer", ce.Service)
	assert.Contains(t, closed.Error(), "dial refused")
	assert.NotContains(t, (&troupe.ClosedError{Service: "x"}).Error(), "<nil>")

	pe := &troupe.PanicError{Where: "stage", Value: cause}
	restart := error(&troupe.RestartError{Stage: "stage", Cause: pe})
	assert.ErrorIs(t, restart, troupe.ErrRestarted)
	assert.ErrorIs(t, restart, troupe.ErrPanic)
	assert.ErrorIs(t, restart, cause, "a panic with an error value unwraps to it")
	var got *troupe.PanicError
	require.ErrorAs(t, restart, &got)
	assert.Equal(t, cause, got.Value)
	assert.Nil(t, (&troupe.PanicError{Value: "text"}).Unwrap())

	sentinels := []error{troupe.ErrPermitUsed, troupe.ErrInvalidPermit, troupe.ErrClosed, troupe.ErrRestarted, troupe.ErrPanic}
	for i, a := range sentinels {
		for j, b := range sentinels {
			assert.Equal(t, i == j, errors.Is(a, b), "%v vs %v", a, b)
		}
		assert.True(t, strings.HasPrefix(a.Error(), "troupe: "))
	}
}
