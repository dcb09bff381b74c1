package stagekit

import "sync"

// AfterFuncs is the list of functions a context runs once it is done, for
// the contexts a stage makes that implement the context package's
// AfterFunc hook (AfterFunc(f func()) (stop func() bool)): with it, a
// context derived from theirs (context.WithCancel, what an HTTP or gRPC
// client does for every call) follows their cancellation without a
// goroutine of its own.
//
// The zero value is empty. Not safe for concurrent use by itself: the
// context guards it with its own lock, the one passed to Add.
type AfterFuncs struct {
	head *afterFn
}

// afterFn is one registration.
type afterFn struct {
	f    func()
	next *afterFn
}

// Add registers f, last, with mu held by the caller, and returns the stop
// function the hook returns: it takes f out (locking mu) and reports
// whether it did so before f was taken to run.
func (l *AfterFuncs) Add(mu sync.Locker, f func()) (stop func() bool) {
	reg := &afterFn{f: f}
	last := &l.head
	for *last != nil {
		last = &(*last).next
	}
	*last = reg
	return func() bool {
		mu.Lock()
		defer mu.Unlock()
		for p := &l.head; *p != nil; p = &(*p).next {
			if *p == reg {
				*p = reg.next
				return true
			}
		}
		return false
	}
}

// Take empties the list (with the lock held) and returns what it held,
// for Run once the lock is released.
func (l *AfterFuncs) Take() AfterFuncs {
	taken := *l
	l.head = nil
	return taken
}

// Run calls the functions, oldest first, on the calling goroutine: the
// context package registers only functions that do not block. Call it
// without the context's lock: a function may call back into the context.
func (l AfterFuncs) Run() {
	for r := l.head; r != nil; r = r.next {
		r.f()
	}
}

// AfterDone is the hook's answer for a context that is done already: f runs on
// a goroutine of its own, as context.AfterFunc does, and stop reports
// false.
func AfterDone(f func()) (stop func() bool) {
	go f()
	return func() bool { return false }
}
