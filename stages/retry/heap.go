package retry

// waitHeap is a min-heap of waiting sessions by the end of their wait; each
// session's idx is its place, -1 once out. Actor-owned.
type waitHeap[Req, Res, T any, P policyPtr[Req, Res, T]] []*session[Req, Res, T, P]

func (h *waitHeap[Req, Res, T, P]) push(ss *session[Req, Res, T, P]) {
	*h = append(*h, ss)
	ss.idx = len(*h) - 1
	h.up(ss.idx)
}

func (h *waitHeap[Req, Res, T, P]) remove(i int) *session[Req, Res, T, P] {
	s := *h
	ss := s[i]
	last := len(s) - 1
	if i != last {
		s[i] = s[last]
		s[i].idx = i
	}
	s[last] = nil
	*h = s[:last]
	if i != last && !h.down(i) {
		h.up(i)
	}
	ss.idx = -1
	return ss
}

func (h waitHeap[Req, Res, T, P]) less(i, j int) bool { return h[i].due.Before(h[j].due) }

func (h waitHeap[Req, Res, T, P]) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}

func (h waitHeap[Req, Res, T, P]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h waitHeap[Req, Res, T, P]) down(i int) bool {
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
