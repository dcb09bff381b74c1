package retry

import "github.com/troupe-go/troupe/actors/stagekit"

// retryNames are the Where of the *troupe.PanicError that a panic in a
// policy's code becomes: the stage's kind and the function's. Constants
// shared by every Retry stage, so that guarding costs no allocation per
// call and no bytes per stage.
var retryNames = struct {
	retry, clone             string // the Policy's methods
	retryable, backoff, copy string // Attempts' functions
}{
	retry:     "retry: Policy.Retry",
	clone:     "retry: Policy.CloneRequest",
	retryable: "retry: Attempts.Retryable",
	backoff:   "retry: Attempts.Backoff",
	copy:      "retry: Attempts.Copy",
}

// attemptsPolicy is implemented by *Attempts and by every policy that
// embeds Attempts: the policy runs user functions of its own, which the
// stage has it guard, and it has a configuration to check.
type attemptsPolicy interface {
	// bind has a session's copy run its functions under guard: from then
	// on a panic in Retryable or Backoff is Retry's outcome, and one in
	// Copy is left in *fault for the session to take.
	bind(fault *error)
	// retryPanics sets RetryPanics (the stage's RetryPanics option).
	retryPanics()
	// check reports a bad configuration.
	check() error
}

// checkPolicy reports a bad configuration of proto, an Attempts or a
// policy embedding one, and whether sessions must bind their copies.
func checkPolicy[Req, Res, T any, P policyPtr[Req, Res, T]](proto *T) (bind bool, err error) {
	ap, ok := any(P(proto)).(attemptsPolicy)
	if !ok {
		return false, nil
	}
	return true, ap.check()
}

// bindPolicy binds the session's own policy copy, when it needs it.
func (ss *session[Req, Res, T, P]) bindPolicy() {
	if ss.b.bind {
		any(P(&ss.pol)).(attemptsPolicy).bind(&ss.fault)
	}
}

// clone runs the policy's CloneRequest under guard: a panic in it, or in
// Attempts' Copy, is the error.
func (ss *session[Req, Res, T, P]) clone(req *Req) (c Req, again bool, err error) {
	if ss.b.builtin {
		// An Attempts, bound: its CloneRequest runs Copy under guard
		// itself, and has no code of the user's besides.
		c, again = P(&ss.pol).CloneRequest(req)
		return c, again, ss.takeFault()
	}
	err = stagekit.Guard(retryNames.clone, func() { c, again = P(&ss.pol).CloneRequest(req) })
	if err == nil {
		err = ss.takeFault()
	}
	return c, again, err
}

// takeFault takes the panic of Attempts' Copy in the last CloneRequest of
// the session's bound policy, if any.
func (ss *session[Req, Res, T, P]) takeFault() error {
	err := ss.fault
	ss.fault = nil
	return err
}

// judge runs the policy's Retry under guard on the attempt's outcome in
// ss.res and ss.err, and returns the outcome it leaves: a panic in it is
// the error, and no retry follows.
func (ss *session[Req, Res, T, P]) judge(res Res, err error) (Res, error, Wait, bool) {
	ss.res, ss.err = res, err
	var w Wait
	var again bool
	var perr error
	if ss.b.builtin {
		// An Attempts, bound: its Retry runs Retryable and Backoff under
		// guard itself (a panic there is the outcome it leaves).
		w, again = P(&ss.pol).Retry(&ss.req, &ss.res, &ss.err)
	} else {
		perr = stagekit.Guard(retryNames.retry, func() { w, again = P(&ss.pol).Retry(&ss.req, &ss.res, &ss.err) })
	}
	res, err = ss.res, ss.err
	var zero Res
	ss.res, ss.err = zero, nil
	if perr != nil {
		return zero, perr, Wait{}, false
	}
	return res, err, w, again
}
