package retry

import "github.com/troupe-go/troupe/actors/stagekit"

// names are the Where of the *troupe.PanicError that a panic in a policy's
// code becomes: the stage's name and the function's. They are made once,
// shared by every stage of the package's name (retryNames), so that
// guarding costs no allocation per call and no bytes per stage.
type names struct {
	retry, clone             string // the Policy's methods
	retryable, backoff, copy string // Attempts' functions
}

// retryNames are the names of every Retry stage's policy functions.
var retryNames = newNames("retry")

func newNames(stage string) *names {
	return &names{
		retry:     stage + ": Policy.Retry",
		clone:     stage + ": Policy.CloneRequest",
		retryable: stage + ": Attempts.Retryable",
		backoff:   stage + ": Attempts.Backoff",
		copy:      stage + ": Attempts.Copy",
	}
}

// attemptsPolicy is implemented by *Attempts and by every policy that
// embeds Attempts: the policy runs user functions of its own, which the
// stage has it guard, and it has a configuration to check.
type attemptsPolicy interface {
	// bind gives a session's copy the names of its functions; from then on
	// a panic in Retryable or Backoff is Retry's outcome, and one in Copy
	// is kept for fault.
	bind(n *names)
	// fault takes the panic of Copy in the last CloneRequest, if any.
	fault() error
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
	ss.ap = nil
	if ss.b.bind {
		ss.ap = any(P(&ss.pol)).(attemptsPolicy)
		ss.ap.bind(retryNames)
	}
}

// clone runs the policy's CloneRequest under guard: a panic in it, or in
// Attempts' Copy, is the error.
func (ss *session[Req, Res, T, P]) clone(req *Req) (c Req, again bool, err error) {
	if ss.b.builtin {
		// An Attempts, bound: its CloneRequest runs Copy under guard
		// itself, and has no code of the user's besides.
		c, again = P(&ss.pol).CloneRequest(req)
		return c, again, ss.ap.fault()
	}
	err = stagekit.Guard(retryNames.clone, func() { c, again = P(&ss.pol).CloneRequest(req) })
	if err == nil && ss.ap != nil {
		err = ss.ap.fault()
	}
	return c, again, err
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
