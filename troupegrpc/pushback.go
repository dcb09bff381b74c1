package troupegrpc

import (
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/troupe-go/troupe/internal/advice"
)

// PushbackKey is the trailer key with which a server asks its client to
// wait before retrying, in milliseconds, as gRPC's retry design names it.
const PushbackKey = "grpc-retry-pushback-ms"

// DefaultMaxPushback is the longest wait a server's pushback may ask of a
// Policy whose MaxPushback is zero.
const DefaultMaxPushback = time.Minute

// ServerPushback returns how long the trailer md asks its client to wait
// before retrying: its PushbackKey entry. ok is false when md has none. A
// value that is negative, does not parse as a whole number of
// milliseconds, or comes more than once asks the client not to retry at
// all: wait is negative then. It is safe for concurrent use.
func ServerPushback(md metadata.MD) (wait time.Duration, ok bool) {
	vs := md.Get(PushbackKey)
	if len(vs) == 0 {
		return 0, false
	}
	if len(vs) > 1 {
		return -1, true
	}
	d, err := advice.Parse(vs[0], time.Millisecond)
	if err != nil || d < 0 {
		return -1, true // a number too large for an int64 too, as gRPC's own client reads it
	}
	return d, true
}

// pushbackMD is the trailer that asks for a wait of d, rounded up to the
// millisecond.
func pushbackMD(d time.Duration) metadata.MD {
	return metadata.Pairs(PushbackKey, advice.Format(d, time.Millisecond))
}
