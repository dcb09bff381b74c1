// Package redisquota keeps troupe's quotas in Redis, so that many
// processes share them by naming the same key: a rate (Limiter) and a
// concurrency budget (Budget).
//
// # A shared rate
//
// A Limiter is Num calls per Per for every process that names its key,
// kept by GCRA (the generic cell rate algorithm) in a Lua script: one
// atomic round trip (EVALSHA) per call decides, on Redis's clock, and
// answers with how long until the next unit. It is a ratelimit.Limiter:
// a rate limit stage given it with ratelimit.Remote asks it for every
// unit on goroutines of its own (never on its actor), and a refusal's
// retry-after makes the stage Limited, its alarm set for then, exactly as
// its own window would. By default (Burst 1) calls are spaced Per/Num
// apart, so no span of Per holds more than Num of them.
//
// # A shared concurrency budget
//
// A Budget is N calls at once for every process that names its key. Each
// call holds a lease: a member of a sorted set whose score is when it
// expires. A running call's lease is renewed every third of the TTL
// (LeaseTTL) and released with the call's outcome; the leases of a process
// that crashed stop being renewed and expire within the TTL, and the next
// acquisition removes them. A SharedLimit stage (NewLimit, or Layer in a
// stack builder) holds a lease for each call it lets through.
//
// # When Redis is away
//
// Every round trip is bounded by the Timeout option (and the caller's
// context); the client must honour contexts (redis.Options'
// ContextTimeoutEnabled, checked at construction). A round trip that fails
// or times out makes the Limiter or Budget consider Redis down for the
// Probe interval, and follow its Policy meanwhile, without round trips:
// FailClosed (the default) fails the calls with an error matching
// ErrUnavailable; Fallback(n) lets the process use 1/n of the quota
// locally, with a slog warning. Nothing waits on Redis longer than the
// Timeout, and every call gets an outcome.
//
// Keys are "troupe:rate:" and "troupe:budget:" followed by the name given.
// Everything here is safe for concurrent use.
package redisquota
