package troupehttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// sentThrough sends r through a Send leaf with opts over a RoundTripper
// that answers 204, and returns the request the RoundTripper was given.
func sentThrough(t *testing.T, r *http.Request, opts ...troupehttp.ClientOption) *http.Request {
	t.Helper()
	var got *http.Request
	leaf := troupehttp.Send(roundTrip(func(out *http.Request) (*http.Response, error) {
		got = out
		return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: out}, nil
	}), opts...)
	res, err := troupe.Do(context.Background(), leaf, r)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.NotNil(t, got)
	return got
}

// The leaf of BaseURL sends a copy of the request to the base URL, as
// ReverseProxy's SetURL routes one: the base's scheme and host, the paths
// joined, the base's query first; the Host header is the base's unless
// the request named another; the caller's request is left as it was.
//
// spec: BAL3
func TestBaseURLSendsACopyOfTheRequestToTheBaseURL(t *testing.T) {
	for _, c := range []struct {
		base, url, want string
	}{
		{"http://10.0.0.7:8080", "http://api/items/7?x=1", "http://10.0.0.7:8080/items/7?x=1"},
		{"http://10.0.0.7:8080/", "http://api/items/7", "http://10.0.0.7:8080/items/7"},
		{"https://10.0.0.7/v1", "http://api/items/7", "https://10.0.0.7/v1/items/7"},
		{"http://10.0.0.7/v1/", "http://api", "http://10.0.0.7/v1/"},
		{"http://10.0.0.7?key=k", "http://api/items?x=1", "http://10.0.0.7/items?key=k&x=1"},
		{"http://10.0.0.7/a%2Fb", "http://api/c%2Fd", "http://10.0.0.7/a%2Fb/c%2Fd"},
		{"http://u:p@10.0.0.7", "http://api/x", "http://u:p@10.0.0.7/x"},
		{"http://10.0.0.7#frag", "http://api/x", "http://10.0.0.7/x"},
	} {
		r, err := http.NewRequest(http.MethodGet, c.url, nil)
		require.NoError(t, err)
		got := sentThrough(t, r, troupehttp.BaseURL(c.base))
		assert.Equal(t, c.want, got.URL.String(), "%s + %s", c.base, c.url)
		assert.Empty(t, got.Host, "the Host header is the base's")
		assert.Equal(t, c.url, r.URL.String(), "the caller's URL is left alone")
		assert.Equal(t, "api", r.Host, "the caller's Host is left alone")
		assert.NotSame(t, r, got)
	}

	t.Run("a Host header of its own is kept", func(t *testing.T) {
		r, err := http.NewRequest(http.MethodGet, "http://api/x", nil)
		require.NoError(t, err)
		r.Host = "shop.example.com"
		got := sentThrough(t, r, troupehttp.BaseURL("http://10.0.0.7"))
		assert.Equal(t, "shop.example.com", got.Host)
		assert.Equal(t, "10.0.0.7", got.URL.Host)
	})

	t.Run("a server's request, forwarded with a path alone", func(t *testing.T) {
		in := httptest.NewRequest(http.MethodGet, "/items/7?x=1", nil) // RequestURI set, URL relative
		in.Host = "gateway.example.com"
		got := sentThrough(t, in, troupehttp.BaseURL("http://10.0.0.7:8080"))
		assert.Equal(t, "http://10.0.0.7:8080/items/7?x=1", got.URL.String())
		assert.Equal(t, "gateway.example.com", got.Host, "the client's Host is forwarded, as net/http's Transport would")
		assert.Equal(t, "/items/7?x=1", got.RequestURI, "Send hands RequestURI on as it is")
		assert.Equal(t, "/items/7?x=1", in.URL.String())
	})

	t.Run("the body and GetBody are the request's", func(t *testing.T) {
		r, err := http.NewRequest(http.MethodPost, "http://api/x", strings.NewReader("payload"))
		require.NoError(t, err)
		r.Header.Set("Idempotency-Key", "k1")
		got := sentThrough(t, r, troupehttp.BaseURL("http://10.0.0.7"))
		assert.True(t, r.Body == got.Body, "the body streams: nothing is read on the way")
		require.NotNil(t, got.GetBody, "the RoundTripper can replay it")
		b, err := got.GetBody()
		require.NoError(t, err)
		body, _ := io.ReadAll(b)
		assert.Equal(t, "payload", string(body))
		assert.Equal(t, r.ContentLength, got.ContentLength)
		assert.Equal(t, "k1", got.Header.Get("Idempotency-Key"))
	})
}

// An http.Client over a Transport whose leaf has BaseURL: the requests,
// written against a logical URL, reach the server at the base URL, the
// Host header its own and the body streamed to it.
//
// spec: BAL3
func TestBaseURLUnderAnHTTPClientReachesTheServer(t *testing.T) {
	type seen struct{ host, path, body string }
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Host, r.URL.RequestURI(), string(b)}
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	hc, _ := newClient(t)
	st, err := gatewayStack().Build(troupetest.NewSystem(t), troupehttp.Send(hc.Transport, troupehttp.BaseURL(srv.URL+"/v1")))
	require.NoError(t, err)
	closeStack(t, st)
	client := &http.Client{Transport: troupehttp.Transport(st)}
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte("streamed"))
		_ = pw.Close()
	}()
	res, err := client.Post("http://orders.internal/orders?dry=1", "text/plain", pr)
	require.NoError(t, err)
	readBody(t, res)
	assert.Equal(t, http.StatusCreated, res.StatusCode)
	s := <-got
	u, _ := url.Parse(srv.URL)
	assert.Equal(t, seen{u.Host, "/v1/orders?dry=1", "streamed"}, s)
}

// A base URL that is not absolute makes the leaf a configuration error.
//
// spec: BAL3
func TestBaseURLThatIsNotAbsoluteIsAConfigurationError(t *testing.T) {
	for _, base := range []string{"", "10.0.0.7:8080", "/v1", "http://", "http://[::1", "mailto:ops@example.com"} {
		_, err := stagesOver(t, troupehttp.Send(nil, troupehttp.BaseURL(base)))
		troupetest.BadOption(t, err, "troupehttp", "BaseURL")
		_, err = stagesOver(t, troupehttp.Client(nil, troupehttp.BaseURL(base)))
		troupetest.BadOption(t, err, "troupehttp", "BaseURL")
	}
}

// stagesOver builds the usual stack over leaf.
func stagesOver(t *testing.T, leaf troupe.Service[req, res]) (*troupe.Stack[req, res], error) {
	t.Helper()
	st, err := gatewayStack().Build(troupetest.NewSystem(t), leaf)
	if err == nil {
		closeStack(t, st)
	}
	return st, err
}
