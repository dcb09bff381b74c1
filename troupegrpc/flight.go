package troupegrpc

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// flight is what the attempts of one call share, whichever stages sent
// them (a hedge's run at once, a retry's one after another): the attempts
// in flight, the status that answered the call, and, for a unary call,
// whether its interceptor has returned. Safe for concurrent use.
//
// A status answers the call when an attempt ends with it, its context
// still live, and it is not worth another attempt: any code but
// UNAVAILABLE and RESOURCE_EXHAUSTED (Retryable's), and any error marked
// permanent. From then on the call is over: the other attempts in flight
// are cancelled and end with the same status (a hedged call ends at once,
// with the server's answer), and an attempt any stage sends later fails
// with it at once, without reaching the server (a retry above a hedge
// never runs the call again). A retry policy that retries that status all
// the same (RetryOn with its code) opens the call again (reopen).
type flight struct {
	mu      sync.Mutex
	running []stopper     // guarded by mu: the attempts in flight; in buf while they fit
	buf     [2]stopper    // guarded by mu
	waits   []*wait       // guarded by mu: retries waiting (until)
	answer  *answer       // guarded by mu: the status that answered the call
	over    bool          // guarded by mu: the unary interceptor returned; no attempt starts
	left    chan struct{} // guarded by mu: closed when the last attempt leaves after over
}

// stopper is an attempt in flight, which the call can stop.
type stopper interface{ stop() }

// answer is the outcome of the attempt whose status answered the call, as
// the call's other attempts end with it: its metadata, no reply.
type answer struct {
	res Result
	err *answeredError
}

// enter adds an attempt to those in flight, unless the call is over: then
// it returns the outcome the attempt ends with at once.
func (f *flight) enter(a stopper) (Result, error, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.over:
		return Result{}, errCallOver, false
	case f.answer != nil:
		return f.answer.res, f.answer.err, false
	}
	if f.running == nil {
		f.running = f.buf[:0]
	}
	f.running = append(f.running, a)
	return Result{}, nil, true
}

// leave takes the attempt a out of those in flight with its outcome, and
// returns the outcome it ends with: its own, or the call's answer when
// another attempt answered the call and a failed (cancelled for it, most
// likely). A status that answers the call stops the other attempts. A
// committed stream's outcome is its own (see committed).
func (f *flight) leave(a stopper, res Result, err error) (Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.Index(f.running, a); i >= 0 {
		f.running = slices.Delete(f.running, i, i+1)
	}
	if f.over && len(f.running) == 0 && f.left != nil {
		close(f.left)
		f.left = nil
	}
	switch _, own := err.(*committedError); {
	case err == nil || own:
	case f.answer != nil:
		return f.answer.res, f.answer.err
	case answers(err):
		ae := &answeredError{err: err, f: f}
		res.Reply = nil
		f.answer = &answer{res: res, err: ae}
		for _, o := range f.running {
			o.stop()
		}
		for len(f.waits) > 0 {
			f.endLocked(f.waits[0])
		}
		return res, ae
	}
	return res, err
}

// close ends a unary call once its stack has returned: no attempt starts
// from now on, and those still in flight, which the stack abandoned, are
// stopped and waited for, so that none touches the caller's request once
// the interceptor returns. They honour their cancelled contexts promptly.
func (f *flight) close() {
	f.mu.Lock()
	f.over = true
	if len(f.running) == 0 {
		f.mu.Unlock()
		return
	}
	left := make(chan struct{})
	f.left = left
	for _, a := range f.running {
		a.stop()
	}
	f.mu.Unlock()
	<-left
}

// reopen lets the call be sent again after e answered it, if e still does.
func (f *flight) reopen(e *answeredError) {
	f.mu.Lock()
	if f.answer != nil && f.answer.err == e {
		f.answer = nil
	}
	f.mu.Unlock()
}

// wait is a retry's wait before its call's next attempt: it ends after its
// delay, or when the call is answered.
type wait struct {
	gate  chan struct{}
	timer *time.Timer // guarded by flight.mu; nil until set
	ended bool        // guarded by flight.mu: gate is closed
}

// until returns a channel closed after d, or as soon as the call is
// answered, whichever comes first: a retry's wait (retry.Until).
func (f *flight) until(d time.Duration) <-chan struct{} {
	w := &wait{gate: make(chan struct{})}
	f.mu.Lock()
	if f.answer != nil {
		f.mu.Unlock()
		close(w.gate)
		return w.gate
	}
	f.waits = append(f.waits, w)
	f.mu.Unlock()
	t := time.AfterFunc(d, func() {
		f.mu.Lock()
		f.endLocked(w)
		f.mu.Unlock()
	})
	f.mu.Lock()
	if w.ended {
		t.Stop()
	} else {
		w.timer = t
	}
	f.mu.Unlock()
	return w.gate
}

// endLocked ends the wait w, once.
func (f *flight) endLocked(w *wait) {
	if i := slices.Index(f.waits, w); i >= 0 {
		f.waits = slices.Delete(f.waits, i, i+1)
	}
	if w.ended {
		return
	}
	w.ended = true
	close(w.gate)
	if w.timer != nil {
		w.timer.Stop()
	}
}

// answers reports whether err, an attempt's outcome, answers its call (see
// flight).
func answers(err error) bool {
	switch {
	case err == nil || errors.Is(err, ErrCallEnded) || errors.Is(err, ErrCommitted):
		return false
	case isPermanent(err):
		return true
	}
	switch Code(err) {
	case codes.OK, codes.Unavailable, codes.ResourceExhausted:
		return false
	}
	return true
}

// answeredError is the outcome of every attempt of a call once a status
// answered it: the status, as gRPC returned it (Unwrap), marked so that a
// retry policy that retries it may open the call again.
type answeredError struct {
	err error
	f   *flight
}

func (e *answeredError) Error() string { return e.err.Error() }
func (e *answeredError) Unwrap() error { return e.err }

// errCallOver is the outcome of an attempt a stage sends after the unary
// interceptor returned: nobody waits for it, and it is never sent.
var errCallOver error = &endedError{err: status.Error(codes.Canceled, "troupegrpc: the call has returned")}

// unaryAttempt is one attempt of a unary call: cancel cancels the context
// it is sent with, which the stages handed down (see flight).
type unaryAttempt struct {
	cancel context.CancelFunc
}

func (a *unaryAttempt) stop() { a.cancel() }
