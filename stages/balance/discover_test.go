package balance_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/balance"
)

// closable is an endpoint that records its Close, and runs onClose then
// when it is set.
type closable struct {
	troupe.Service[int, int]
	closes  atomic.Int32
	onClose func()
}

func (c *closable) Close(context.Context) error {
	c.closes.Add(1)
	if c.onClose != nil {
		c.onClose()
	}
	return nil
}

func keys(b *balance.Balancer[string, int, int]) []string {
	var out []string
	for _, s := range b.Stats() {
		out = append(out, s.Key)
	}
	slices.Sort(out)
	return out
}

// callMany makes n calls and fails the test on an error.
func callMany(t *testing.T, svc troupe.Service[int, int], n int) {
	t.Helper()
	for i := range n {
		_, err := troupe.Do(context.Background(), svc, i)
		require.NoError(t, err)
	}
}

// Endpoints inserted and removed through a channel: an inserted one is
// picked, a removed one no more; the balancer closes those handed to it
// (Owned) once removed, or replaced, and leaves the others open.
//
// spec: BAL1
func TestAChannelInsertsAndRemovesEndpoints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan balance.Change[string, int, int])
		bal, err := balance.New(balance.Channel(ch), seeded)
		require.NoError(t, err)
		var ca, cb, ca2 counted
		a, b, a2 := &closable{Service: ca.svc()}, &closable{Service: cb.svc()}, &closable{Service: ca2.svc()}
		ch <- balance.Change[string, int, int]{Op: balance.Insert, Key: "a", Service: a, Owned: true}
		ch <- balance.Change[string, int, int]{Op: balance.Insert, Key: "b", Service: b}
		synctest.Wait()
		assert.Equal(t, []string{"a", "b"}, keys(bal))
		callMany(t, bal, 100)
		assert.Positive(t, ca.calls.Load())
		assert.Positive(t, cb.calls.Load())

		ch <- balance.Change[string, int, int]{Op: balance.Insert, Key: "a", Service: a2, Owned: true}
		synctest.Wait()
		assert.Equal(t, int32(1), a.closes.Load(), "the endpoint replaced is closed: it was the balancer's")
		before := ca.calls.Load()
		ch <- balance.Change[string, int, int]{Op: balance.Remove, Key: "a"}
		synctest.Wait()
		assert.Equal(t, int32(1), a2.closes.Load())
		assert.Equal(t, []string{"b"}, keys(bal))
		callMany(t, bal, 100)
		assert.Equal(t, before, ca.calls.Load(), "a removed endpoint gets no call")

		ch <- balance.Change[string, int, int]{Op: balance.Remove, Key: "b"}
		synctest.Wait()
		assert.Zero(t, b.closes.Load(), "not the balancer's to close")
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = bal.Reserve(ctx)
		assert.ErrorIs(t, err, balance.ErrNoneReady)
		close(ch)
		require.NoError(t, bal.Close(context.Background()))
		assert.Zero(t, b.closes.Load())
	})
}

// A polled list of keys: a new key gets the endpoint build makes, a key
// gone is removed and its endpoint closed; a list error leaves the set as
// it is, a build error leaves the key out until a later poll builds it;
// Close closes what is left.
//
// spec: BAL1
func TestAPolledListInsertsAndRemovesEndpoints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		want, listErr := []string{"a", "b"}, error(nil)
		broken := map[string]bool{}
		built := map[string]*closable{}
		list := func(context.Context) ([]string, error) {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(want), listErr
		}
		build := func(k string) (troupe.Service[int, int], error) {
			mu.Lock()
			defer mu.Unlock()
			if broken[k] {
				return nil, errors.New("cannot build " + k)
			}
			var c counted
			built[k] = &closable{Service: c.svc()}
			return built[k], nil
		}
		set := func(f func()) {
			mu.Lock()
			f()
			mu.Unlock()
			time.Sleep(time.Second)
			synctest.Wait()
		}
		bal, err := balance.New(balance.Poll(time.Second, list, build), seeded)
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, []string{"a", "b"}, keys(bal), "polled at once")
		callMany(t, bal, 10)

		set(func() { want, broken["x"] = []string{"b", "c", "x"}, true })
		assert.Equal(t, []string{"b", "c"}, keys(bal))
		assert.Equal(t, int32(1), built["a"].closes.Load(), "a, gone from the list, was closed")

		set(func() { want, listErr = nil, errors.New("resolver down") })
		assert.Equal(t, []string{"b", "c"}, keys(bal), "a list error changes nothing")

		set(func() { want, listErr, broken["x"] = []string{"b", "c", "x"}, nil, false })
		assert.Equal(t, []string{"b", "c", "x"}, keys(bal), "x built at last")
		callMany(t, bal, 10)

		require.NoError(t, bal.Close(context.Background()))
		for _, k := range []string{"b", "c", "x"} {
			assert.Equal(t, int32(1), built[k].closes.Load(), k)
		}
	})
}

// New refuses bad options and sources with an error matching
// troupe.ErrBadConfig.
func TestBadConfigurationIsAnErrorOfNew(t *testing.T) {
	list := func(context.Context) ([]string, error) { return nil, nil }
	build := func(string) (troupe.Service[int, int], error) { return nil, nil }
	for name, c := range map[string]struct {
		src  balance.Source[string, int, int]
		opts []balance.Option[int]
	}{
		"nil option":        {opts: []balance.Option[int]{nil}},
		"zero decay":        {opts: []balance.Option[int]{balance.PeakEWMA(0, time.Millisecond)}},
		"zero rtt":          {opts: []balance.Option[int]{balance.PeakEWMA(time.Second, 0)}},
		"negative cooldown": {opts: []balance.Option[int]{balance.FailureCooldown(-1)}},
		"nil refused":       {opts: []balance.Option[int]{balance.Refused(nil)}},
		"nil rand source":   {opts: []balance.Option[int]{balance.WithSource(nil)}},
		"zero backoff":      {opts: []balance.Option[int]{balance.WithBackoff(backoffZero)}},
		"nil observer":      {opts: []balance.Option[int]{balance.Observe(nil, "p")}},
		"nil logger":        {opts: []balance.Option[int]{balance.Logger(nil)}},
		"nil classify":      {opts: []balance.Option[int]{balance.Classify[int](nil)}},
		"nil channel":       {src: balance.Channel[string, int, int](nil)},
		"nil list":          {src: balance.Poll(time.Second, nil, build)},
		"nil build":         {src: balance.Poll[string, int, int](time.Second, list, nil)},
		"zero interval":     {src: balance.Poll(0, list, build)},
	} {
		_, err := balance.New(c.src, c.opts...)
		var ce *troupe.ConfigError
		if assert.ErrorAs(t, err, &ce, name) {
			assert.Equal(t, "balance", ce.Stage, name)
		}
		assert.ErrorIs(t, err, troupe.ErrBadConfig, name)
	}
}
