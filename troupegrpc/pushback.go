package troupegrpc

import (
	"strconv"
	"time"

	"google.golang.org/grpc/metadata"
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
	ms, err := strconv.ParseInt(vs[0], 10, 64)
	switch {
	case err != nil || ms < 0:
		return -1, true
	case ms > int64(time.Duration(1<<63-1)/time.Millisecond):
		return time.Duration(1<<63 - 1), true // more than anyone waits
	}
	return time.Duration(ms) * time.Millisecond, true
}

// pushbackMD is the trailer that asks for a wait of d, rounded up to the
// millisecond.
func pushbackMD(d time.Duration) metadata.MD {
	ms := (max(d, 0) + time.Millisecond - 1) / time.Millisecond
	return metadata.Pairs(PushbackKey, strconv.FormatInt(int64(ms), 10))
}
