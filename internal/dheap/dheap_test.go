package dheap

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

type item struct{ v, idx int }

func (x *item) Less(o *item) bool { return x.v < o.v }
func (x *item) SetIndex(i int)    { x.idx = i }

func TestHeapOrdersAndRemovesAnywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	h := &Heap[*item]{}
	var live []*item
	for range 2000 {
		switch r.IntN(3) {
		case 0, 1:
			x := &item{v: r.IntN(100)}
			h.Push(x)
			live = append(live, x)
		case 2:
			if len(live) > 0 {
				k := r.IntN(len(live))
				x := live[k]
				require.Same(t, x, h.Remove(x.idx))
				require.Equal(t, -1, x.idx)
				live = slices.Delete(live, k, k+1)
			}
		}
		for i, x := range h.items {
			require.Equal(t, i, x.idx)
		}
	}
	var got []int
	for h.Len() > 0 {
		got = append(got, h.Remove(0).v)
	}
	require.True(t, slices.IsSorted(got))
	require.Len(t, got, len(live))
	h.Push(&item{v: 1})
	h.Clear()
	require.Zero(t, h.Len())
}
