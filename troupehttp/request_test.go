package troupehttp_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/troupehttp"
)

func TestCloneRequest(t *testing.T) {
	newReq := func(body io.Reader) *http.Request {
		r, err := http.NewRequest(http.MethodPost, "http://example.invalid/x", body)
		require.NoError(t, err)
		r.Header.Set("X-A", "1")
		return r
	}

	t.Run("no body is copyable", func(t *testing.T) {
		for _, r := range []*http.Request{newReq(nil), newReq(http.NoBody)} {
			c, ok := troupehttp.CloneRequest(r)
			require.True(t, ok)
			assert.NotSame(t, r, c)
			assert.Equal(t, r.Body, c.Body)
		}
	})

	t.Run("GetBody gives the copy a fresh body", func(t *testing.T) {
		r := newReq(bytes.NewReader([]byte("payload")))
		c, ok := troupehttp.CloneRequest(r)
		require.True(t, ok)
		b, _ := io.ReadAll(r.Body) // the original is consumed first...
		assert.Equal(t, "payload", string(b))
		b, _ = io.ReadAll(c.Body) // ...and the copy still has it all
		assert.Equal(t, "payload", string(b))
		assert.NotNil(t, c.GetBody, "a copy can be copied again")
		c.Header.Set("X-A", "2")
		assert.Equal(t, "1", r.Header.Get("X-A"), "headers are deep-copied")
	})

	t.Run("a body without GetBody is not copyable", func(t *testing.T) {
		r := newReq(io.NopCloser(strings.NewReader("once")))
		require.Nil(t, r.GetBody)
		c, ok := troupehttp.CloneRequest(r)
		assert.False(t, ok)
		assert.Nil(t, c)
	})

	t.Run("a failing GetBody is not copyable", func(t *testing.T) {
		r := newReq(strings.NewReader("x"))
		r.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("gone") }
		_, ok := troupehttp.CloneRequest(r)
		assert.False(t, ok)
	})

	t.Run("nil", func(t *testing.T) {
		_, ok := troupehttp.CloneRequest(nil)
		assert.False(t, ok)
	})
}

func TestReplayable(t *testing.T) {
	t.Run("a one-shot body becomes replayable", func(t *testing.T) {
		orig := &closeRecorder{Reader: strings.NewReader("stream")}
		r, err := http.NewRequest(http.MethodPost, "http://example.invalid/", orig)
		require.NoError(t, err)
		rr, err := troupehttp.Replayable(r, 100)
		require.NoError(t, err)
		assert.True(t, orig.closed.Load(), "the original body was read and closed")
		assert.EqualValues(t, 6, rr.ContentLength)
		assert.Nil(t, r.GetBody, "req is not modified")
		for range 3 {
			c, ok := troupehttp.CloneRequest(rr)
			require.True(t, ok)
			b, _ := io.ReadAll(c.Body)
			assert.Equal(t, "stream", string(b))
		}
		b, _ := io.ReadAll(rr.Body)
		assert.Equal(t, "stream", string(b))
	})

	t.Run("an empty body becomes NoBody", func(t *testing.T) {
		r, err := http.NewRequest(http.MethodPost, "http://example.invalid/", io.NopCloser(strings.NewReader("")))
		require.NoError(t, err)
		rr, err := troupehttp.Replayable(r, 100)
		require.NoError(t, err)
		assert.Equal(t, http.NoBody, rr.Body)
		_, ok := troupehttp.CloneRequest(rr)
		assert.True(t, ok)
	})

	t.Run("already replayable requests come back as they are", func(t *testing.T) {
		for _, body := range []io.Reader{nil, strings.NewReader("x")} {
			r, err := http.NewRequest(http.MethodPost, "http://example.invalid/", body)
			require.NoError(t, err)
			rr, err := troupehttp.Replayable(r, 0)
			require.NoError(t, err)
			assert.Same(t, r, rr)
		}
	})

	t.Run("over the limit: ErrBodyTooLarge, and the request can still be sent once", func(t *testing.T) {
		orig := &closeRecorder{Reader: strings.NewReader("0123456789")}
		r, err := http.NewRequest(http.MethodPost, "http://example.invalid/", orig)
		require.NoError(t, err)
		rr, err := troupehttp.Replayable(r, 4)
		require.ErrorIs(t, err, troupehttp.ErrBodyTooLarge)
		require.NotNil(t, rr)
		assert.False(t, orig.closed.Load(), "the rest of the body is still to be sent")
		_, ok := troupehttp.CloneRequest(rr)
		assert.False(t, ok, "not replayable")
		b, _ := io.ReadAll(rr.Body)
		assert.Equal(t, "0123456789", string(b), "nothing was lost")
		require.NoError(t, rr.Body.Close())
		assert.True(t, orig.closed.Load())
	})

	t.Run("a read error closes the body", func(t *testing.T) {
		orig := &closeRecorder{Reader: iotest.ErrReader(errors.New("broken"))}
		r, err := http.NewRequest(http.MethodPost, "http://example.invalid/", orig)
		require.NoError(t, err)
		rr, err := troupehttp.Replayable(r, 4)
		require.ErrorContains(t, err, "broken")
		assert.Nil(t, rr)
		assert.True(t, orig.closed.Load())
	})
}

func TestHoldBody(t *testing.T) {
	t.Run("held: readable, the network body closed", func(t *testing.T) {
		orig := &closeRecorder{Reader: strings.NewReader("error page")}
		resp := &http.Response{Body: orig, ContentLength: -1}
		require.NoError(t, troupehttp.HoldBody(resp, 100))
		assert.True(t, orig.closed.Load())
		assert.True(t, troupehttp.Held(resp))
		assert.EqualValues(t, 10, resp.ContentLength)
		b, _ := io.ReadAll(resp.Body)
		assert.Equal(t, "error page", string(b))
	})

	t.Run("over the limit: not held, nothing lost", func(t *testing.T) {
		orig := &closeRecorder{Reader: strings.NewReader("error page")}
		resp := &http.Response{Body: orig}
		require.ErrorIs(t, troupehttp.HoldBody(resp, 5), troupehttp.ErrBodyTooLarge)
		assert.False(t, troupehttp.Held(resp))
		b, _ := io.ReadAll(resp.Body)
		assert.Equal(t, "error page", string(b))
		require.NoError(t, resp.Body.Close())
		assert.True(t, orig.closed.Load())
	})

	t.Run("a read error: closed, the error kept", func(t *testing.T) {
		orig := &closeRecorder{Reader: io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(errors.New("reset")))}
		resp := &http.Response{Body: orig}
		require.ErrorContains(t, troupehttp.HoldBody(resp, 100), "reset")
		assert.True(t, orig.closed.Load())
		b, err := io.ReadAll(resp.Body)
		assert.Equal(t, "ab", string(b))
		assert.ErrorContains(t, err, "reset")
	})

	t.Run("no body needs no holding", func(t *testing.T) {
		assert.True(t, troupehttp.Held(&http.Response{Body: http.NoBody}))
		assert.NoError(t, troupehttp.HoldBody(&http.Response{}, 0))
	})
}
