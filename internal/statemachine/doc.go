// Package statemachine holds no code: only a randomised state-machine test
// (pgregory.net/rapid) that builds random stacks of troupe's stages over a
// scripted downstream, drives them with random operations (reserve, call,
// release, drop a permit, cancel, answer or panic downstream, restart a
// stage, close) and checks, after every sequence, that every accepted call
// got exactly one outcome, that no capacity leaked, that no goroutine was
// left behind and that nothing waited past its bound.
//
// Run it longer with
//
//	go test -race ./internal/statemachine -statemachine.n=10000
//
// A failure prints rapid's replay flags (-rapid.failfile or -rapid.seed).
package statemachine
