package retry_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupetest"
)

// tlog is a trace, shared by pointer between the test and every policy copy.
type tlog struct {
	mu    sync.Mutex
	lines []string
}

func (l *tlog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *tlog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

// treq is the seed's Req: a body and an attempt counter.
type treq struct {
	body    string
	attempt int
}

// attempts is the seed's policy: retry errors while left > 0, bumping the
// request's attempt counter; the wait is a gate the test opens.
type attempts struct {
	left int
	gate chan struct{}
	log  *tlog
}

func (a *attempts) Retry(req *treq, res *string, err *error) (retry.Wait, bool) {
	outcome := fmt.Sprintf("Ok(%q)", *res)
	if *err != nil {
		outcome = fmt.Sprintf("Err(%q)", (*err).Error())
	}
	verdict := "stop"
	if *err != nil && a.left > 0 {
		verdict = "retry"
	}
	a.log.add("  policy.retry(attempt=%d, %s) left=%d -> %s", req.attempt, outcome, a.left, verdict)
	if verdict == "stop" {
		return retry.Wait{}, false
	}
	a.left--
	req.attempt++ // the next attempt sends the changed request
	return retry.Until(a.gate), true
}

func (a *attempts) CloneRequest(req *treq) (treq, bool) {
	a.log.add("  policy.clone_request(attempt=%d)", req.attempt)
	return *req, true
}

// spec: RT8, RT1, RT2, RT4, RT6, RT9
func TestRT8_SeedTracesABC(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		log := &tlog{}
		gate := make(chan struct{})
		mock, h := troupetest.NewMock[treq, string]()
		svc, err := retry.New(sys, mock, attempts{left: 1, gate: gate, log: log})
		require.NoError(t, err)
		ctx := context.Background()
		outcome := func(r troupetest.Result[string]) string {
			if r.Err != nil {
				return fmt.Sprintf("Err(%q)", r.Err.Error())
			}
			return fmt.Sprintf("Ok(%q)", r.Value)
		}
		state := func() string {
			s := svc.Sessions()
			switch {
			case s.Waiting > 0:
				return "Waiting"
			case s.Retrying > 0:
				return "Retrying"
			case s.Sessions > 0:
				return "Called"
			}
			return "none"
		}

		log.add("A. error, wait, retry")
		h.Allow(1)
		p, err := svc.Reserve(ctx)
		log.add("svc.reserve -> %v", err)
		fut := troupetest.GoWith(ctx, p, treq{"hello", 0})
		req := h.Next(ctx)
		log.add("inner got %+v", req.Value)
		req.Fail(errors.New("boom"))
		synctest.Wait()
		log.add("session -> %s", state())
		gate <- struct{}{}
		synctest.Wait()
		log.add("gate opened -> %s, inner has a request? %v", state(), h.TryNext() != nil)
		h.Allow(1)
		req = h.Next(ctx)
		log.add("allow(1) -> inner got %+v", req.Value)
		req.Respond("world")
		log.add("result: %s", outcome(<-fut))

		log.add("B. a second request gets a fresh policy copy")
		h.Allow(1)
		fut = troupetest.Go(ctx, svc, treq{"again", 0})
		h.Next(ctx).Fail(errors.New("boom"))
		synctest.Wait()
		gate <- struct{}{}
		h.Allow(1)
		h.Next(ctx).Fail(errors.New("boom again"))
		log.add("result: %s", outcome(<-fut))

		log.add("C. inner readiness fails while Retrying")
		h.Allow(1)
		fut = troupetest.Go(ctx, svc, treq{"third", 0})
		h.Next(ctx).Fail(errors.New("boom"))
		synctest.Wait()
		h.Break(errors.New("inner broken"))
		gate <- struct{}{}
		log.add("result: %s", outcome(<-fut))

		assert.Equal(t, []string{
			"A. error, wait, retry",
			"svc.reserve -> <nil>",
			"  policy.clone_request(attempt=0)",
			"inner got {body:hello attempt:0}",
			`  policy.retry(attempt=0, Err("boom")) left=1 -> retry`,
			"session -> Waiting",
			"gate opened -> Retrying, inner has a request? false",
			"  policy.clone_request(attempt=1)",
			"allow(1) -> inner got {body:hello attempt:1}",
			`  policy.retry(attempt=1, Ok("world")) left=0 -> stop`,
			`result: Ok("world")`,
			"B. a second request gets a fresh policy copy",
			"  policy.clone_request(attempt=0)",
			`  policy.retry(attempt=0, Err("boom")) left=1 -> retry`,
			"  policy.clone_request(attempt=1)",
			`  policy.retry(attempt=1, Err("boom again")) left=0 -> stop`,
			`result: Err("boom again")`,
			"C. inner readiness fails while Retrying",
			"  policy.clone_request(attempt=0)",
			`  policy.retry(attempt=0, Err("boom")) left=1 -> retry`,
			`result: Err("inner broken")`, // the policy is not asked (RT9)
		}, log.take())

		_, err = svc.Reserve(ctx)
		assert.ErrorIs(t, err, troupe.ErrClosed, "a readiness error breaks the stage (CORE7)")
	})
}

// counting is the seed's puzzle: it counts in both methods, and retries
// once even on success, so both are called twice per request.
type counting struct {
	clones, retries int
	log             *tlog
}

func (c *counting) Retry(req *int, _ *int, _ *error) (retry.Wait, bool) {
	c.retries++
	c.log.add("req %d: retry         clones=%d retries=%d", *req, c.clones, c.retries)
	return retry.Wait{}, c.retries < 2
}

func (c *counting) CloneRequest(req *int) (int, bool) {
	c.clones++
	c.log.add("req %d: clone_request clones=%d", *req, c.clones)
	return *req, true
}

// spec: RT5, RT4
func TestRT5_CountInCloneRequestDoesNotLeakIntoLaterSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &tlog{}
		echo := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
		svc, err := retry.New(troupetest.NewSystem(t), echo, counting{log: log})
		require.NoError(t, err)
		for req := 1; req <= 3; req++ {
			_, err := troupe.Do[int, int](context.Background(), svc, req)
			require.NoError(t, err)
		}
		var want []string
		for req := 1; req <= 3; req++ { // tower prints clones=1, 2, 3 for the first line of each
			want = append(want,
				fmt.Sprintf("req %d: clone_request clones=1", req),
				fmt.Sprintf("req %d: retry         clones=1 retries=1", req),
				fmt.Sprintf("req %d: clone_request clones=2", req),
				fmt.Sprintf("req %d: retry         clones=2 retries=2", req))
		}
		assert.Equal(t, want, log.take(), "troupe's answer to the puzzle: the third request starts from a fresh count")
	})
}
