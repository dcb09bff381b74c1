package troupehttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/loadshed"
)

// ServerCall is one incoming request on its way through a server's
// admission stack: the request type of a stack for Handler. Handler makes
// it; the Serve leaf runs the handler with it. Its request never changes
// once made, and Request is safe for concurrent use; the response writer
// it carries is the handler's alone. A nil *ServerCall answers zero values.
type ServerCall struct {
	w serverWriter // the handler's writer: one allocation with the call
	r *http.Request
}

// Request returns the incoming request, for a filter's predicate or a
// priority function (its method, path, headers and context).
func (c *ServerCall) Request() *http.Request {
	if c == nil {
		return nil
	}
	return c.r
}

// ErrHandlerStatus is matched by the error of a call whose handler answered
// with a 5xx status: the failure a Breaker or an Adaptive limit in the
// server's stack counts. The response is written already; Handler writes
// nothing more.
var ErrHandlerStatus = errors.New("troupehttp: the handler answered with a server error")

// HandlerStatusError is the error of a call whose handler answered with a
// 5xx status. It matches ErrHandlerStatus.
//
// A plain value, safe for concurrent use.
type HandlerStatusError struct{ Status int }

func (e *HandlerStatusError) Error() string {
	return fmt.Sprintf("troupehttp: the handler answered %d %s", e.Status, http.StatusText(e.Status))
}

// Is reports whether target is ErrHandlerStatus.
func (e *HandlerStatusError) Is(target error) bool { return target == ErrHandlerStatus }

// errNilServerCall is the leaf's answer to a nil *ServerCall.
var errNilServerCall = errors.New("troupehttp: Serve was given a nil *ServerCall")

// errNilHandler is the answer of Serve(nil)'s leaf to every call.
var errNilHandler = &troupe.ConfigError{Stage: "troupehttp.Serve", Option: "http.Handler", Why: "nil"}

// errAborted is the outcome of a call whose handler panicked with
// http.ErrAbortHandler; Handler panics with it again for net/http.
var errAborted = errors.New("troupehttp: the handler aborted the response")

// Serve returns the leaf service of a server's admission stack: it runs h
// for the call, on the goroutine net/http gave the request, with the
// context the stages hand down (a Timeout's deadline, say) as the
// request's context. Its response is the status h wrote (200 when h wrote
// none, unless the context had ended: then the context's error, so that a
// handler that gave up on a request is not counted a success); a 5xx
// status is the call's failure (a *HandlerStatusError), so that a Breaker
// or an Adaptive limit counts it, and a panic in h is a
// troupe.ErrPanic failure as for any leaf; net/http's http.ErrAbortHandler
// goes on up as net/http expects it. A server stack admits requests; it
// does not retry or hedge them (a Retry or Hedge stage in it would run h
// again on a response already written to), nor detach them (a Timeout in
// Abandon mode would run h on another goroutine while Handler answers).
//
// The service is safe for concurrent use.
func Serve(h http.Handler) *actors.FuncService[*ServerCall, int] {
	return actors.Func(func(ctx context.Context, c *ServerCall) (status int, err error) {
		switch {
		case h == nil:
			return 0, errNilHandler
		case c == nil || c.w.ResponseWriter == nil || c.r == nil:
			return 0, errNilServerCall
		}
		r := c.r
		if ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		defer func() {
			if v := recover(); v != nil {
				if v != http.ErrAbortHandler {
					panic(v)
				}
				c.w.aborted = true
				status, err = 0, errAborted
			}
		}()
		h.ServeHTTP(&c.w, r)
		status = c.w.status
		if status == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err // it gave up on the request: not a success to count
			}
			status = http.StatusOK
		}
		if status >= 500 {
			return status, &HandlerStatusError{Status: status}
		}
		return status, nil
	}, "troupehttp.Serve")
}

// HandlerOption configures a Handler. An option is a function value with
// no state of its own: it is safe for concurrent use.
type HandlerOption func(*handlerConfig)

// handlerConfig is a Handler's configuration; set when it is made, then
// read-only.
type handlerConfig struct {
	priority func(*http.Request) loadshed.Priority
	bad      error // a nil option or function: every request fails with it
}

// WithPriority gives each request the priority p returns for it (see
// loadshed.WithPriority): a LoadShed with slots kept for the higher
// priorities (loadshed.KeepFor) sheds the lower ones first. A nil p makes
// every request fail with a 500 and an error matching troupe.ErrBadConfig.
func WithPriority(p func(*http.Request) loadshed.Priority) HandlerOption {
	return func(c *handlerConfig) {
		if p == nil {
			c.bad = &troupe.ConfigError{Stage: "troupehttp.Handler", Option: "WithPriority", Why: "the function is nil"}
			return
		}
		c.priority = p
	}
}

// Handler returns an http.Handler that admits every request through svc,
// any troupe stack over the Serve leaf of the handler to protect: a load
// shedder in front of a concurrency limit, an adaptive limit, a rate limit
// or a breaker makes it admission control for an HTTP server.
//
//	stack, err := stages.Stack[*troupehttp.ServerCall, int]().
//		LoadShed(loadshed.Capacity(8)). // up to 8 wait for a slot, the rest are shed
//		Limit(64).
//		Build(sys, troupehttp.Serve(mux))
//	srv := &http.Server{Handler: troupehttp.Handler(stack)}
//
// Each request is reserved and called with its own context, so a client
// that goes away ends its wait for admission. A request the stack refuses
// before the handler ran is answered as ErrorHandler answers: a shed
// request, an open breaker or a closed stack 503 with a Retry-After, a
// RateLimit's refusal (ratelimit.MaxWait, or a deadline before the
// request's turn) or a *RateLimitedError (a quota of your own in a Filter)
// 429 with its Retry-After, a wait a Timeout ended 504. Once the handler has written
// its response, nothing more is written, whatever the stack's outcome.
//
// The handler is safe for concurrent use.
func Handler(svc troupe.Service[*ServerCall, int], opts ...HandlerOption) http.Handler {
	var cfg handlerConfig
	for i, o := range opts {
		if o == nil {
			cfg.bad = &troupe.ConfigError{Stage: "troupehttp.Handler", Option: fmt.Sprintf("option %d of %d", i+1, len(opts)), Why: "nil"}
			break
		}
		o(&cfg)
	}
	if svc == nil && cfg.bad == nil {
		cfg.bad = &troupe.ConfigError{Stage: "troupehttp.Handler", Option: "service", Why: "nil"}
	}
	return &serverHandler{svc: svc, cfg: cfg}
}

// serverHandler is Handler's http.Handler; its fields are set when it is
// made, then read-only.
type serverHandler struct {
	svc troupe.Service[*ServerCall, int]
	cfg handlerConfig
}

func (s *serverHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.cfg.bad != nil {
		http.Error(w, s.cfg.bad.Error(), http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	if s.cfg.priority != nil {
		ctx = loadshed.WithPriority(ctx, s.cfg.priority(r))
		r = r.WithContext(ctx)
	}
	c := &ServerCall{w: serverWriter{ResponseWriter: w}, r: r}
	_, err := troupe.Do(ctx, s.svc, c)
	switch {
	case c.w.aborted:
		panic(http.ErrAbortHandler)
	case err == nil || c.w.status != 0:
		return // the handler wrote its answer
	}
	ErrorHandler(w, r, err)
}

// serverWriter is the handler's http.ResponseWriter: it records the status
// written. It is used by the handler's goroutine (the request's: the Serve
// leaf runs there) and read by ServeHTTP once troupe.Do returned, when the
// handler is done.
type serverWriter struct {
	http.ResponseWriter
	status  int // the status written; 0 while nothing was
	aborted bool
}

// wrote records the status of the response's first write.
func (w *serverWriter) wrote(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *serverWriter) WriteHeader(code int) {
	if code >= 200 {
		w.wrote(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *serverWriter) Write(b []byte) (int, error) {
	w.wrote(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// Flush sends what was written so far, when the underlying writer can
// (a streamed response, server-sent events).
func (w *serverWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		w.wrote(http.StatusOK)
		f.Flush()
	}
}

// Unwrap returns the underlying writer, for http.ResponseController
// (deadlines, hijacking, full duplex).
func (w *serverWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
