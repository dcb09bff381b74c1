package filter_test

import "context"

// checkCall is one run of a checker's check, answered by the test.
type checkCall struct {
	ctx   context.Context
	v     int
	reply chan checkReply
}

type checkReply struct {
	v   int
	err error
}

func (c *checkCall) pass(v int)       { c.reply <- checkReply{v: v} }
func (c *checkCall) reject(err error) { c.reply <- checkReply{err: err} }

// checker is a check the test drives: each run is handed to the test and
// waits for its answer, or for its context unless ignoreCtx.
type checker struct {
	calls     chan *checkCall
	ignoreCtx bool
}

func newChecker() *checker { return &checker{calls: make(chan *checkCall, 64)} }

func (c *checker) check(ctx context.Context, v int) (int, error) {
	cc := &checkCall{ctx: ctx, v: v, reply: make(chan checkReply, 1)}
	c.calls <- cc
	if c.ignoreCtx {
		r := <-cc.reply
		return r.v, r.err
	}
	select {
	case r := <-cc.reply:
		return r.v, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
