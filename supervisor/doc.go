// Package supervisor supervises troupe's stage actors: restart strategies
// with real exponential backoff and jitter, restart intensity, and one
// supervised pipeline per downstream.
//
// A Pipeline is a host of its own (a protoactor-go supervisor actor whose
// children are the pipeline's stages) and the stack built in it: its stages
// fail, restart and stop independently of every other pipeline's, so a
// failing downstream never blocks another one. A Group keeps one pipeline
// per key (a host name, a shard) and builds them on first use; it closes a
// pipeline no Get asked for during its idle TTL, keeps at most MaxKeys of
// them (the least recently used goes first), and builds a new one for a
// key whose pipeline failed for good or was closed.
//
// A pipeline's Strategy is Backoff by default: a failed stage (a panic, a
// failed connection of a Reconnect stage) is restarted after an exponential
// delay with jitter, gRPC's connection backoff (1 s, x1.6, jitter 0.2, at most
// 120 s). protoactor-go's own "exponential" strategy is linear with
// nanosecond jitter; this one is not. The delay grows with the failures
// within Window, or, for a failure that counts its own streak (a Streak:
// Reconnect's connection failures), with the failures in a row since the
// stage was last healthy, so that it starts over after a healthy
// connection. More than MaxRestarts failures of one stage within Window
// (default 10 in 60 s) stop it instead, streak or not: the pipeline reports
// the failure and stops retrying, instead of spinning.
//
// Why 10 in 60 s: OTP's default (1 restart in 5 s) gives up on a network
// peer after its first blip, and Akka's restart source never gives up; with
// gRPC's backoff a peer that is simply down fails about 8 times a minute,
// so 10 in 60 s stops only a stage that keeps failing faster than its
// backoff (a connection that is accepted and then breaks at once, a stage
// that panics on every message).
package supervisor
