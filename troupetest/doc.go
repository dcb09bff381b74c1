// Package troupetest helps test stacks of troupe stages, yours and ours: a
// mock service (tower-test's mock, in Go) whose readiness the test grants
// unit by unit, whose requests the test takes as they arrive, and answers
// with a response or an error; or whose readiness the test makes fail.
//
//	mock, h := troupetest.NewMock[string, string]()
//	svc, _ := buffer.New(sys, mock, 4)
//	h.Allow(1)                          // one reservation may succeed
//	go func() { out, err = troupe.Do(ctx, svc, "hi") }()
//	req := h.Next(ctx)                  // the request as the mock got it
//	req.Respond("hello")                // the caller's outcome
//
// The mock is the innermost service: like actors.Func, it runs on the
// caller's goroutine, which waits in Next's request until the test answers.
package troupetest
