package troupehttp

import (
	"io"
	"net/http"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// streams reports whether an outcome still holds its downstream once
// delivered: a response whose body streams from a connection. It is what a
// Hold keeps (see HoldUntilBodyClosed).
func streams(res *http.Response, err error) bool { return err == nil && !Held(res) }

// holdBody makes res's body release h when it is closed, read to its end,
// or fails; a response with nothing to stream releases h at once.
func holdBody(res *http.Response, h *stagekit.Hold) {
	if Held(res) {
		h.Release()
		return
	}
	b := heldOpen{ReadCloser: res.Body, h: h}
	if w, ok := res.Body.(io.Writer); ok {
		res.Body = &heldOpenRW{heldOpen: b, w: w} // a 101's connection
		return
	}
	res.Body = &b
}

// heldOpen is a response body that releases its Hold when it is closed,
// read to its end or fails. Release is safe to call more than once, and
// from a Read and a Close at once.
type heldOpen struct {
	io.ReadCloser
	h *stagekit.Hold
}

func (b *heldOpen) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.h.Release()
	}
	return n, err
}

func (b *heldOpen) Close() error {
	err := b.ReadCloser.Close()
	b.h.Release()
	return err
}

// heldOpenRW is heldOpen for a body that is also written to: the
// connection of a 101 Switching Protocols response.
type heldOpenRW struct {
	heldOpen
	w io.Writer
}

func (b *heldOpenRW) Write(p []byte) (int, error) { return b.w.Write(p) }
