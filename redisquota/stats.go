package redisquota

import "time"

// Stats is what a Limiter or a Budget has seen of Redis since it was
// made, and its state now (Limiter.Stats, Budget.Stats; a SharedLimit
// stage's Stats Detail carries its budget's). A plain value, safe for
// concurrent use.
type Stats struct {
	Key  string // the quota's main Redis key
	Down bool   // Redis is considered unavailable now (calls follow the policy)

	RoundTrips int64 // round trips to Redis, of every operation
	Failures   int64 // those that failed or took longer than the Timeout
	Outages    int64 // times Redis went from answering to not

	// Of the round trips Redis answered: the last one's latency, the
	// mean and the longest.
	LastLatency, MeanLatency, MaxLatency time.Duration

	Fallbacks int64 // calls decided locally, by the Fallback policy's share

	// Disagree lists the settings other processes use for this key when
	// they are not this one's (see Limiter.Check); nil when all agree.
	Disagree []string

	// A Budget's only.
	HeldBack        bool  // new leases are held back now: Redis lost the leases (a restart, a failover)
	HoldBacks       int64 // times this Budget found them held back
	Reregistered    int64 // leases put back in Redis by their renewal while held back
	RenewFailures   int64 // renewals that failed (each is tried again at the next)
	Lost            int64 // leases that expired while their calls still ran
	ReleaseFailures int64 // releases that failed; each is then retried in the background
	PendingReleases int   // leases being given back in the background now
	Abandoned       int64 // acquisitions whose answer came too late; given back in the background
}
