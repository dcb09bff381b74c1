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
// # When Redis is away, slow or restarted
//
// Every round trip is bounded by the Timeout option (and the caller's
// context); the client must honour contexts (redis.Options'
// ContextTimeoutEnabled, checked at construction). A round trip that fails
// or times out makes the Limiter or Budget consider Redis down: calls then
// follow its Policy at once, without round trips, and every Probe interval
// one call starts a probe in the background, whose success ends the
// outage. FailClosed (the default) fails the calls with an error matching
// ErrUnavailable; Fallback(n) lets the process use a conservative 1/n
// share of the quota locally, with a slog warning. Nothing waits on Redis
// longer than the Timeout, and every call gets an outcome.
//
// A call whose round trip timed out may still reach Redis later (a Redis
// paused, or busy in a long command, runs what it was sent once it goes
// on). It spends nothing then: each call carries the caller's deadline on
// Redis's clock (estimated from the time every reply carries), and the
// scripts refuse what comes after it; an acquisition that ran but whose
// answer came too late is released in the background. A release that
// fails is retried in the background until Redis takes it or the lease
// has expired there. A Redis that lost the leases (restarted without
// persistence, or a replica promoted by a failover) is detected, and the
// budget is held back for one lease TTL while the running calls' renewals
// put their leases back (ErrHeldBack). Processes that share a key with
// other settings (a rate, a budget) are told: a slog warning naming both,
// Stats, and Check's error.
//
// # Keys and Redis versions
//
// Keys are the prefix (Prefix, default "troupe:"), the name in braces (a
// Redis Cluster hash tag: every key a script touches is in one slot), and
// a suffix: "troupe:{ocr-api}:rate" and ":rate:conf" for a rate;
// ":budget" (the leases), ":budget:conf", ":budget:epoch" and
// ":budget:hold" for a budget. All but the epoch expire when unused; the
// epoch (a few dozen bytes) stays. The scripts need Redis 5.0 or later
// (effects replication of scripts that read TIME and INFO); they are
// tested against Redis 7.0, alone and as a Redis Cluster. A single server,
// Sentinel (a redis.NewFailoverClient) and Cluster (a
// redis.NewClusterClient) all work.
//
// # Observing it
//
// Stats returns the round trips, failures, latencies, outages, fallback
// decisions, hold-backs and background releases of a Limiter or a Budget;
// a SharedLimit stage's Stats Detail carries its budget's. With the
// Observe option the same reach a troupe.Observer as events (see
// Observe).
//
// Everything here is safe for concurrent use.
package redisquota
