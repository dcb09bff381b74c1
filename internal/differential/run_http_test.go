package differential

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"

	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupehttp"
)

// callerHeader carries a request's caller through troupehttp.Handler.
const callerHeader = "X-Caller"

func callerOf(c *troupehttp.ServerCall) int {
	id, _ := strconv.Atoi(c.Request().Header.Get(callerHeader))
	return id
}

// buildServer builds the script's stack as a server's admission stack:
// troupehttp.Handler over the stages, over the Serve leaf of a handler
// that runs the downstream's function with the request's context and
// writes its outcome: 200 and the value, or 500 for its error; it writes
// nothing when its context ended first, and a panic goes on up.
func (h *realStacks) buildServer(fn func(context.Context, int) (int, error)) (http.Handler, error) {
	b := stages.Stack[*troupehttp.ServerCall, int]()
	for _, l := range h.sc.layers {
		b = addLayer(l, b, callerOf)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.Atoi(r.Header.Get(callerHeader))
		v, err := fn(r.Context(), id)
		switch {
		case errors.Is(err, errLeaf):
			w.WriteHeader(http.StatusInternalServerError)
		case err == nil:
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, v)
		}
	})
	st, err := b.Build(h.sys, troupehttp.Serve(handler))
	if err != nil {
		return nil, err
	}
	h.closers = append(h.closers, st)
	return troupehttp.Handler(st), nil
}

// serveOne is caller id's request to the server, with ctx: its response's
// status, Retry-After and body, as an outcome's class.
func serveOne(ctx context.Context, server http.Handler, id int) outcome {
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	r.Header.Set(callerHeader, strconv.Itoa(id))
	w := httptest.NewRecorder()
	server.ServeHTTP(w, r)
	return response(w.Code, w.Header().Get("Retry-After"), w.Body.String())
}

// response is an HTTP response as an outcome's class.
func response(code int, retryAfter, body string) outcome {
	return outcome{err: fmt.Sprintf("http %d retry-after %q body %q", code, retryAfter, body)}
}
