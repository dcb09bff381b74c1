package stagekit_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// registry is a long-lived parent context that counts the cancellations
// linked to it (it implements the context package's AfterFunc hook, and
// hides its own cancelCtx, so that every link goes through it).
type registry struct {
	context.Context
	live atomic.Int64
}

func (r *registry) Value(any) any { return nil }

func (r *registry) AfterFunc(f func()) func() bool {
	r.live.Add(1)
	stop := context.AfterFunc(r.Context, f)
	var once sync.Once
	return func() bool {
		stopped := stop()
		once.Do(func() { r.live.Add(-1) })
		return stopped
	}
}

// A settled context follows its parent for as long as anyone can reach
// it, and no longer: 1,000 settled contexts whose work asked for Done,
// then dropped, leave no link on a parent that lives on; one still held
// (a response being read) ends with its parent.
//
// spec: EG13
func TestASettledContextFollowsItsParentOnlyWhileReachable(t *testing.T) {
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	parent := &registry{Context: base}
	func() {
		for range 1000 {
			c := new(stagekit.CtxCore)
			c.Init(parent)
			c.Done()
			c.Settle()
		}
	}()
	kept := new(stagekit.CtxCore)
	kept.Init(parent)
	done := kept.Done()
	kept.Settle()
	require.EqualValues(t, 1001, parent.live.Load())
	for i := 0; i < 1000 && parent.live.Load() > 1; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	assert.EqualValues(t, 1, parent.live.Load(), "the dropped contexts' links are gone; the kept one's stays")
	cancel()
	<-done
	assert.ErrorIs(t, kept.Err(), context.Canceled)
	runtime.KeepAlive(kept)
}

// The stage cancels a context only until its call settles; a settled
// context keeps a stage's cancellation it had before, and AfterFunc
// registrations run once, on the cancellation that ends it.
//
// spec: EG13
func TestAStageCancelsItsContextOnlyUntilItsCallSettles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		defer cancel()

		early := new(stagekit.CtxCore)
		early.Init(parent)
		ran := make(chan struct{})
		context.AfterFunc(early, func() { close(ran) })
		require.True(t, early.Cancel(context.DeadlineExceeded))
		<-ran
		early.Settle()
		assert.ErrorIs(t, early.Err(), context.DeadlineExceeded, "cancelled before it settled: stays so")
		assert.False(t, early.Cancel(context.Canceled), "only the first cancellation counts")

		settled := new(stagekit.CtxCore)
		settled.Init(parent)
		var runs atomic.Int32
		context.AfterFunc(settled, func() { runs.Add(1) })
		settled.Settle()
		assert.False(t, settled.Cancel(context.Canceled), "settled: the stage no longer cancels it")
		settled.StopWork(nil)
		assert.NoError(t, settled.Err())
		cancel()
		synctest.Wait()
		assert.ErrorIs(t, settled.Err(), context.Canceled)
		assert.EqualValues(t, 1, runs.Load())
	})
}
