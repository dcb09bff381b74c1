package troupegrpc

import (
	"fmt"
	"reflect"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// msgType makes empty messages of one type, for attempts to receive into:
// one per attempt, so that concurrent attempts (a hedge's) never write the
// same message. It is taken from the caller's message on the caller's
// goroutine, before any attempt runs, so that no attempt ever reads the
// caller's message. A plain value, safe for concurrent use.
type msgType struct {
	proto protoreflect.MessageType // a protocol buffer's
	ptr   reflect.Type             // any other pointer's element type
	same  any                      // anything else (a nil message among them), used as it is
}

// typeOf returns the type of m.
func typeOf(m any) msgType {
	if pm, ok := m.(proto.Message); ok && pm != nil {
		return msgType{proto: pm.ProtoReflect().Type()}
	}
	if t := reflect.TypeOf(m); t != nil && t.Kind() == reflect.Pointer {
		return msgType{ptr: t.Elem()}
	}
	return msgType{same: m}
}

// fresh returns a new, empty message of the type.
func (t msgType) fresh() any {
	switch {
	case t.proto != nil:
		return t.proto.New().Interface()
	case t.ptr != nil:
		return reflect.New(t.ptr).Interface()
	}
	return t.same
}

// copyMsg copies the message src into dst, the caller's, of the same type.
func copyMsg(dst, src any) error {
	if dst == src {
		return nil
	}
	if src == nil || reflect.TypeOf(dst) != reflect.TypeOf(src) {
		return fmt.Errorf("%w: got %T, want %T", ErrBadReply, src, dst)
	}
	dv, sv := reflect.ValueOf(dst), reflect.ValueOf(src)
	if dv.Kind() != reflect.Pointer || dv.IsNil() || sv.IsNil() {
		return fmt.Errorf("%w: %T is not a pointer to a message", ErrBadReply, dst)
	}
	if d, ok := dst.(proto.Message); ok {
		proto.Reset(d)
		proto.Merge(d, src.(proto.Message))
		return nil
	}
	dv.Elem().Set(sv.Elem())
	return nil
}

// replayable returns a copy of m to keep for a later attempt, and its size
// in bytes; ok is false for a message that cannot be copied (one that is
// not a protocol buffer), which is kept as it is.
func replayable(m any) (c any, size int, ok bool) {
	pm, ok := m.(proto.Message)
	if !ok || pm == nil {
		return m, 0, false
	}
	return proto.Clone(pm), proto.Size(pm), true
}

// callOpts are the caller's call options, less those that receive a value
// from the call: every attempt gets options of its own for these, and the
// caller's are filled from the attempt whose outcome the stack returns.
type callOpts struct {
	rest    []grpc.CallOption
	header  []*metadata.MD
	trailer []*metadata.MD
	peer    []*peer.Peer
}

func splitOpts(opts []grpc.CallOption) callOpts {
	c := callOpts{rest: opts} // nothing to take out: no copy
	for i, o := range opts {
		switch o.(type) {
		case grpc.HeaderCallOption, grpc.TrailerCallOption, grpc.PeerCallOption:
		default:
			continue
		}
		c.rest = append(make([]grpc.CallOption, 0, len(opts)), opts[:i]...)
		for _, o := range opts[i:] {
			switch o := o.(type) {
			case grpc.HeaderCallOption:
				c.header = append(c.header, o.HeaderAddr)
			case grpc.TrailerCallOption:
				c.trailer = append(c.trailer, o.TrailerAddr)
			case grpc.PeerCallOption:
				c.peer = append(c.peer, o.PeerAddr)
			default:
				c.rest = append(c.rest, o)
			}
		}
		break
	}
	return c
}

// fill hands the caller the metadata and peer of the attempt that made
// the outcome.
func (c *callOpts) fill(header, trailer metadata.MD, p *peer.Peer) {
	for _, h := range c.header {
		if h != nil {
			*h = header
		}
	}
	for _, t := range c.trailer {
		if t != nil {
			*t = trailer
		}
	}
	for _, pp := range c.peer {
		if pp != nil && p != nil {
			*pp = *p
		}
	}
}
