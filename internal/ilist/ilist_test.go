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

// item can be in two lists at once: a through its Links, b through byB.
type item struct {
	ilist.Links[item]
	byB ilist.Links[item]
	v   int
}

// model is a list as a slice of values, beside the List it predicts.
type model struct {
	l     ilist.List[item]
	links func(*item) *ilist.Links[item]
	want  []int
}

// check compares the list, walked both ways, with the model.
func (m *model) check(t *testing.T) {
	t.Helper()
	require.Equal(t, len(m.want), m.l.Len())
	fwd, back, want := []int{}, []int{}, append([]int{}, m.want...)
	for e := m.l.Front(); e != nil; e = m.l.Next(m.links(e)) {
		fwd = append(fwd, e.v)
	}
	for e := m.l.Back(); e != nil; e = m.l.Prev(m.links(e)) {
		back = append(back, e.v)
	}
	slices.Reverse(back)
	if len(m.want) == 0 {
		assert.Nil(t, m.l.Front())
		assert.Nil(t, m.l.Back())
	}
	require.Equal(t, want, fwd, "front to back")
	require.Equal(t, want, back, "back to front")
}

// step adds items[i] to the list (at the end, first, or after a listed
// element chosen by r), or takes it out if it is in.
func (m *model) step(r *rand.Rand, items []*item, i int) {
	e := items[i]
	k := m.links(e)
	if k.Listed() {
		m.l.Remove(k)
		m.want = slices.DeleteFunc(m.want, func(v int) bool { return v == i })
		return
	}
	switch r.IntN(3) {
	case 0:
		m.l.Push(e, k)
		m.want = append(m.want, i)
	case 1:
		m.l.PushFront(e, k)
		m.want = slices.Insert(m.want, 0, i)
	default:
		if len(m.want) == 0 {
			m.l.InsertAfter(e, k, nil)
			m.want = []int{i}
			return
		}
		at := r.IntN(len(m.want))
		m.l.InsertAfter(e, k, m.links(items[m.want[at]]))
		m.want = slices.Insert(m.want, at+1, i)
	}
}

// Random adds, inserts and removals keep each list in the order a slice
// model of it predicts, walked from either end, and an element's place in
// one list is independent of its place in the other.
//
// spec: KIT3
func TestListsKeepTheOrderOfTheirInsertsAndRemovals(t *testing.T) {
	items := make([]*item, 40)
	for i := range items {
		items[i] = &item{v: i}
	}
	a := &model{links: func(e *item) *ilist.Links[item] { return &e.Links }}
	b := &model{links: func(e *item) *ilist.Links[item] { return &e.byB }}
	r := rand.New(rand.NewPCG(3, 4))
	for range 4000 {
		m := a
		if r.IntN(2) == 0 {
			m = b
		}
		m.step(r, items, r.IntN(len(items)))
		a.check(t)
		b.check(t)
	}
	// Drain a from the front: its order is kept to the last.
	for e := a.l.Front(); e != nil; e = a.l.Front() {
		require.Equal(t, a.want[0], e.v)
		a.l.Remove(&e.Links)
		a.want = a.want[1:]
		assert.False(t, e.Listed())
	}
	a.check(t)
	b.check(t)
}

// Take moves every element, in order, to the list it returns and leaves
// the list empty and ready for more; the elements stay listed, in the
// list taken, until removed from it.
//
// spec: KIT3
func TestTakeMovesTheElementsToTheListItReturns(t *testing.T) {
	var l ilist.List[item]
	items := []*item{{v: 0}, {v: 1}, {v: 2}}
	for _, e := range items {
		l.Push(e, &e.Links)
	}
	taken := l.Take()
	assert.Zero(t, l.Len())
	assert.Nil(t, l.Front())
	assert.Nil(t, l.Back())
	require.Equal(t, 3, taken.Len())
	var got []int
	for e := taken.Front(); e != nil; e = taken.Front() {
		assert.True(t, e.Listed())
		got = append(got, e.v)
		taken.Remove(&e.Links)
	}
	assert.Equal(t, []int{0, 1, 2}, got)
	assert.Zero(t, taken.Len())

	l.Push(items[1], &items[1].Links)
	assert.Equal(t, 1, l.Len())
	assert.Same(t, items[1], l.Front())
	assert.Same(t, items[1], l.Back())
}
