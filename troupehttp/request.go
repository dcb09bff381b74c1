package troupehttp

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// DefaultReplayLimit is a reasonable limit for Replayable: 1 MiB.
const DefaultReplayLimit = 1 << 20

// CloneRequest copies req for another attempt: it has the signature of
// retry.Attempts' Copy, and RetryPolicy uses it. The copy is req.Clone (a
// deep copy of headers, URL and the rest) with a body of its own:
//
//   - a request without a body (nil or http.NoBody) is always copyable;
//   - a request with a body is copyable when it has GetBody, which gives the
//     copy a fresh body (http.NewRequest sets it for *bytes.Buffer,
//     *bytes.Reader and *strings.Reader bodies; Replayable sets it for any
//     body);
//   - a body without GetBody, or a GetBody that fails, makes req not
//     copyable: CloneRequest returns nil and false, and a retry stage sends
//     the request once and never retries it.
//
// req is not modified. A copy that is never sent is not closed: a GetBody
// should return bodies that hold no resource (those of http.NewRequest and
// Replayable hold none). CloneRequest is safe for concurrent use if
// req.GetBody is.
func CloneRequest(req *http.Request) (*http.Request, bool) {
	if req == nil {
		return nil, false
	}
	if req.Body == nil || req.Body == http.NoBody {
		return req.Clone(req.Context()), true
	}
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil || body == nil {
		return nil, false
	}
	c := req.Clone(req.Context())
	c.Body = body
	return c, true
}

// Replayable returns a request that CloneRequest can copy: req itself when
// it is already copyable (no body, or GetBody set), otherwise a shallow
// copy of req whose body is held in memory, with GetBody set and
// ContentLength set if it was unknown. It reads req's body to its end, up
// to limit bytes, and closes it. req is not modified, but its body is
// consumed: use the returned request.
//
// What a failure leaves behind: for a body longer than limit, Replayable
// returns a request that can still be sent once (its body reads the bytes
// already read followed by the rest of req's body, which stays open; it
// has no GetBody) together with an error matching ErrBodyTooLarge. For a
// read error, req's body is closed and Replayable returns nil and the error.
//
// Replayable runs on the calling goroutine and blocks while it reads. The
// returned request's GetBody is safe for concurrent use.
func Replayable(req *http.Request, limit int64) (*http.Request, error) {
	if req == nil {
		return nil, ErrNilRequest
	}
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return req, nil
	}
	buf, over, err := readUpTo(req.Body, limit)
	if err != nil {
		_ = req.Body.Close()
		return nil, fmt.Errorf("troupehttp: Replayable: reading the body: %w", err)
	}
	r := req.WithContext(req.Context()) // a shallow copy
	if over {
		r.Body = &readCloser{Reader: io.MultiReader(bytes.NewReader(buf), req.Body), Closer: req.Body}
		return r, tooLarge("request body", limit)
	}
	_ = req.Body.Close()
	if r.ContentLength <= 0 {
		r.ContentLength = int64(len(buf))
	}
	if len(buf) == 0 {
		r.Body = http.NoBody
		r.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
		return r, nil
	}
	r.Body = io.NopCloser(bytes.NewReader(buf))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
	return r, nil
}
