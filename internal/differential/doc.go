// Package differential holds no code: only a differential test of troupe's
// stages against a reference model of their semantics.
//
// The model (model_*_test.go) is plain, single-threaded Go over a virtual
// clock: each built-in stage is a few lines of straight code (a mailbox of
// slots with a line of waiters, the stage's rule, its continuation on the
// outcome), a caller's goroutine is a queue of the leaf work it runs one at
// a time, and time is an event queue. The test (pgregory.net/rapid, in a
// testing/synctest bubble) draws a random stack of two to five stages and a
// script (callers arriving at given times, some with deadlines; the
// downstream's latency and outcome for each attempt: a value, an error, a
// panic, work that ignores its context), runs the script through the real
// stack and through the model on the same clock, and compares what every
// caller got (its value or its error's class, and when) and the
// downstream's calls (who, which attempt, when). A difference is a bug on
// one side.
//
// 1,000 sequences a run (CI runs it too); run more with, for instance,
//
//	go test ./internal/differential -differential.n=100000
//
// A failure prints the script, both sides' records, and rapid's replay
// flags (-rapid.seed). The bubble makes the real side deterministic up to
// the order of goroutines that wake at the same instant; the scripts keep
// the times they draw apart, so that no two events the outcome depends on
// fall on one instant.
package differential
