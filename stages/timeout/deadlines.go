package timeout

import "github.com/troupe-go/troupe/actors"

// deadlines is a min-heap of the frames of calls in flight, by deadline.
// Each frame's Index is its place in the heap, -1 once out of it. Guarded by
// the stage's mutex.
type deadlines[Req, Res any] []*actors.Frame[Req, Res]

func (h *deadlines[Req, Res]) push(f *actors.Frame[Req, Res]) {
	*h = append(*h, f)
	f.Index = len(*h) - 1
	h.up(f.Index)
}

// remove takes out the frame at index i.
func (h *deadlines[Req, Res]) remove(i int) *actors.Frame[Req, Res] {
	s := *h
	f := s[i]
	last := len(s) - 1
	if i != last {
		s[i] = s[last]
		s[i].Index = i
	}
	s[last] = nil
	*h = s[:last]
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
	f.Index = -1
	return f
}

func (h deadlines[Req, Res]) less(i, j int) bool { return h[i].Deadline.Before(h[j].Deadline) }

func (h deadlines[Req, Res]) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].Index, h[j].Index = i, j
}

func (h deadlines[Req, Res]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h deadlines[Req, Res]) down(i int) bool {
	start := i
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		c := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			c = r
		}
		if !h.less(c, i) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > start
}
