package troupehttp

import (
	"bytes"
	"io"
	"math"
	"net/http"
)

// DefaultHoldLimit is how many bytes of a response body the Client leaf
// holds in memory at most (HoldLimit changes it).
const DefaultHoldLimit = 64 << 10

// HoldBody reads res.Body into memory, up to limit bytes, closes the
// network body and puts the bytes in its place: res then holds no
// connection, so dropping it unread leaks nothing, and whoever gets it
// reads the same bytes. A connection whose body was read to the end goes
// back to its transport's idle pool. Held reports true for res afterwards.
// A nil or http.NoBody body needs no holding.
//
// What a failure leaves behind: for a body longer than limit, res.Body
// reads the bytes already read followed by the rest of the network body,
// which stays open (res still holds its connection and must be closed),
// and the error matches ErrBodyTooLarge. For a read error, the network body
// is closed, res.Body reads the bytes already read and then that error, and
// that error is returned.
//
// HoldBody runs on the calling goroutine and blocks while the body
// arrives; the request's context bounds the read. It must not be called
// concurrently with anything else using res.
func HoldBody(res *http.Response, limit int64) error {
	if res == nil || res.Body == nil || res.Body == http.NoBody || Held(res) {
		return nil
	}
	body := res.Body
	buf, over, err := readUpTo(body, limit)
	switch {
	case err != nil:
		_ = body.Close()
		res.Body = &readCloser{Reader: io.MultiReader(bytes.NewReader(buf), errReader{err}), Closer: nopCloser{}}
		return err
	case over:
		res.Body = &readCloser{Reader: io.MultiReader(bytes.NewReader(buf), body), Closer: body}
		return tooLarge("response body", limit)
	}
	_ = body.Close()
	res.Body = &heldBody{Reader: bytes.NewReader(buf)}
	res.ContentLength = int64(len(buf))
	return nil
}

// Held reports whether res can be dropped unread without leaking a
// connection: its body is nil, http.NoBody, or held in memory by HoldBody
// (as the Client leaf does for the statuses of HoldStatus). Retryable and
// RetryOn retry a status only on a held response.
func Held(res *http.Response) bool {
	if res == nil || res.Body == nil || res.Body == http.NoBody {
		return true
	}
	_, ok := res.Body.(*heldBody)
	return ok
}

// heldBody is a response body held in memory by HoldBody. Closing it does
// nothing; it holds no resource. Like any body, it is for one reader.
type heldBody struct{ *bytes.Reader }

func (*heldBody) Close() error { return nil }

// readCloser joins a reader and the closer of what it reads.
type readCloser struct {
	io.Reader
	io.Closer
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// errReader fails every read with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// readUpTo reads r to its end, or until more than limit bytes came: over is
// then true and buf holds limit+1 bytes (a negative limit counts as 0). The
// caller owns r and closes it.
func readUpTo(r io.Reader, limit int64) (buf []byte, over bool, err error) {
	limit = max(limit, 0)
	n := limit
	if n < math.MaxInt64 {
		n++
	}
	buf, err = io.ReadAll(io.LimitReader(r, n))
	return buf, int64(len(buf)) > limit, err
}
