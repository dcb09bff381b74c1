package ilist_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/internal/ilist"
	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

type item struct {
	ilist.Links[item]
	v int
}

func TestPushRemoveKeepOrder(t *testing.T) {
	var l ilist.List[item, *item]
	items := make([]*item, 50)
	for i := range items {
		items[i] = &item{v: i}
	}
	var want []int
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		i := r.IntN(len(items))
		e := items[i]
		if e.Listed() {
			l.Remove(e)
			want = slices.DeleteFunc(want, func(v int) bool { return v == i })
		} else {
			l.Push(e)
			want = append(want, i)
		}
		require.Equal(t, len(want), l.Len())
		if len(want) > 0 {
			assert.Equal(t, want[0], l.Front().v)
			assert.Equal(t, want[len(want)-1], l.Back().v)
		} else {
			assert.Nil(t, l.Front())
			assert.Nil(t, l.Back())
		}
	}
	// Drain from the front: the order is the order of pushes.
	var got []int
	for e := l.Front(); e != nil; e = l.Front() {
		got = append(got, e.v)
		l.Remove(e)
	}
	assert.Equal(t, want, got)
	assert.Zero(t, l.Len())
}
