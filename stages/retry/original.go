package retry

import "github.com/troupe-go/troupe/actors/stagekit"

// original is the hook of the frame a session's first attempt rides the
// request with: the request itself goes on down the path, so that a call
// retried never (almost every one) costs no envelope of its own. Its
// outcome comes back to the frame: it goes on outward when it ends the
// session, and stops there (the hook keeps it) when a retry follows; the
// session's final outcome then goes on from the frame beneath. A session
// that ends while its first attempt runs (the stage failing) claims the
// frame instead; when the first attempt's outcome reaches the frame in the
// same instant, the session's outcome goes on in its place (stagekit.Ride
// decides which came first).
type original[Req, Res, T any, P policyPtr[Req, Res, T]] struct {
	ss *session[Req, Res, T, P]
}

func (o *original[Req, Res, T, P]) Complete(_ *stagekit.Envelope[Req, Res], _ *stagekit.Frame[Req, Res], out stagekit.Outcome[Res]) stagekit.Outcome[Res] {
	return o.ss.originalDone(out.Res, out.Err)
}

// originalDone is the first attempt's outcome reaching the session's frame.
func (ss *session[Req, Res, T, P]) originalDone(res Res, err error) stagekit.Outcome[Res] {
	defer ss.unref() // the attempt's reference
	if out, outErr, first := ss.ride.Arrived(); !first {
		return stagekit.Outcome[Res]{Res: out, Err: outErr} // the session's own outcome, whose claim came too late
	}
	if ss.state.Load() != running {
		return stagekit.Outcome[Res]{Res: res, Err: err, Kept: true} // the session ended meanwhile: its end goes on from beneath the frame
	}
	res, err, final := ss.settle(res, err)
	if final && ss.finishOriginal() {
		return stagekit.Outcome[Res]{Res: res, Err: err}
	}
	return stagekit.Outcome[Res]{Res: res, Err: err, Kept: true} // a retry follows, or the session ended another way meanwhile
}

// finishOriginal ends the session with its first attempt's outcome, which
// the frame passes on; it reports false when the session had ended
// another way meanwhile (that end then goes on from beneath the frame).
func (ss *session[Req, Res, T, P]) finishOriginal() bool {
	if !ss.state.CompareAndSwap(running, done) {
		return false
	}
	idle := ss.leaveLive()
	ss.b.st.FreeSlot()
	ss.ended(idle)
	return true
}
