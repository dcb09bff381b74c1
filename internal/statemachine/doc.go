// Package statemachine holds no code: only a randomised state-machine test
// (pgregory.net/rapid) that builds random stacks of two to five of troupe's
// stages over a scripted downstream, in an actor system, a host or a
// supervised pipeline, drives them with random operations (reserve, call,
// reserve-and-call, release, drop a permit, reuse a spent one, cancel a
// call, answer or fail blocked user code, panics in user code, a stage
// restart, close with a short or a long deadline) and checks that every
// accepted call gets exactly one outcome, that no capacity leaks, that no
// goroutine is left behind and that nothing waits past its bound.
//
// The test runs in real time (see bound_test.go for why); 50 sequences by
// default (each go test run, so CI runs it too), 40 with -short. Run it
// longer with, for instance,
//
//	go test -race -timeout 60m ./internal/statemachine -statemachine.n=10000
//
// A failure prints rapid's replay flags (-rapid.failfile or -rapid.seed);
// since real interleavings vary, a replay may need a few runs to fail
// again. The constants at the top of statemachine_test.go switch off
// operations that trigger a bug not fixed yet (none today). One rare
// failure is still open: a limit slot left held after stage restarts and
// cancels (about one sequence in several thousand; seed
// 10486009826960007364 on the commit that notes it), so CI runs few
// sequences.
package statemachine
