package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupehttp"
)

type (
	request  = *http.Request
	response = *http.Response
)

// limiterRate is the rate the limiter enforces: cfg.rate per cfg.per
// stretched by the safety margin (see summary.go for why).
func (c config) limiterRate() ratelimit.Rate {
	return ratelimit.Rate{Num: c.rate, Per: c.per + time.Duration(float64(c.per)*c.margin)}
}

// spacing is the smooth limiter's interval between two requests: Per/Num
// rounded up, as package ratelimit computes it.
func (c config) spacing() time.Duration {
	r := c.limiterRate()
	return (r.Per + time.Duration(r.Num) - 1) / time.Duration(r.Num)
}

func (c config) stackLine() string {
	r := c.limiterRate()
	return fmt.Sprintf("limit %d -> timeout %v -> retry (%d retries, %v doubling, or the server's Retry-After) -> ratelimit %d per %v (smooth, one every %v) -> troupehttp.Client",
		c.concurrency, c.timeout, c.retries, c.backoff, r.Num, r.Per, c.spacing())
}

// pipeline is the stack's name on the dashboard.
const pipeline = "ocr-client"

// buildStack builds the seed's stack, observed by dash when there is one.
// The first layer added is the outermost.
func buildStack(h troupe.Host, hc *http.Client, cfg config, dash *troupehttp.Dashboard) (*troupe.Stack[request, response], error) {
	bo, err := backoff.New(cfg.backoff, max(cfg.backoff, cfg.timeout)) // x2 each time, no jitter
	if err != nil {
		return nil, err
	}
	// The stages inside the limit set no limit of their own: they admit
	// what it lets in. The stages are named by kind ("limit", "timeout"...):
	// the progress line reads the limit's Stats by name.
	b := stages.Stack[request, response]()
	if dash != nil {
		b = b.Observe(dash.Observer(), pipeline)
	}
	return b.
		Limit(cfg.concurrency).
		Timeout(cfg.timeout).
		Layer(troupehttp.Retry(cfg.retries, bo)).
		RateLimit(cfg.limiterRate(), ratelimit.Smooth(1)).
		Build(h, troupehttp.Client(hc))
}

// job is one image to read.
type job struct {
	id         int
	img        []byte
	unreadable bool
}

// makeJob makes image id: 2-16 KiB, the same for a given seed; a share of
// them is unreadable (no PNG signature).
func makeJob(seed uint64, id int, bad float64) job {
	r := rand.New(rand.NewPCG(seed, uint64(id)))
	j := job{id: id, img: make([]byte, 2<<10+r.IntN(14<<10)), unreadable: r.Float64() < bad}
	for i := range j.img {
		j.img[i] = byte(r.Uint32())
	}
	if j.unreadable {
		j.img[0] = 0
	} else {
		copy(j.img, pngMagic)
	}
	return j
}

// request is the POST for j. The image comes as a stream that can be read
// once (as from a file or an upload): CloneRequest could not copy it, and
// the retry stage would send it once and never retry it. Replayable holds
// it in memory so that every attempt sends it whole. Reading an image
// twice does no harm, and the request says so with an Idempotency-Key:
// without one, troupehttp's retry policy sends a POST once (or again only
// if it never left).
func (j job) request(url string) (*http.Request, error) {
	r, err := http.NewRequest(http.MethodPost, url, io.NopCloser(bytes.NewReader(j.img)))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "image/png")
	r.Header.Set(headerID, strconv.Itoa(j.id))
	r.Header.Set(headerSum, strconv.FormatUint(uint64(crc32.ChecksumIEEE(j.img)), 16))
	r.Header.Set("Idempotency-Key", "ocr-"+strconv.Itoa(j.id))
	return troupehttp.Replayable(r, troupehttp.DefaultReplayLimit)
}

// The causes of failure, as the summary prints them.
const (
	cause429       = "429 Too Many Requests, retries exhausted"
	cause500       = "500 Internal Server Error, retries exhausted"
	cause504       = "504 Gateway Timeout, retries exhausted"
	cause400       = "400 Bad Request (unreadable image), not retried"
	causeTimeout   = "timeout (the whole request, retries included)"
	causeTransport = "transport error, retries exhausted"
	causeOther     = "other"
)

var causes = []string{cause429, cause500, cause504, cause400, causeTimeout, causeTransport, causeOther}

// classify reads the outcome of job id and closes its body. It returns ""
// for a success, or the cause of the failure (and, for causeOther, what
// happened).
func classify(id int, res *http.Response, err error) (string, error) {
	if err != nil {
		if res != nil {
			_ = res.Body.Close() // not from these stages, but a body is closed
		}
		var ue *url.Error
		switch {
		case errors.Is(err, timeout.ErrTimeout):
			return causeTimeout, nil
		case errors.Is(err, troupehttp.ErrCallEnded), errors.Is(err, context.Canceled):
			return causeOther, err // the caller gave up
		case errors.As(err, &ue):
			return causeTransport, nil // after the retries; or at once with -retries 0
		}
		return causeOther, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return causeOther, fmt.Errorf("reading the answer: %w", err)
	}
	switch res.StatusCode {
	case http.StatusOK:
		var text struct{ ID, Text string }
		if err := json.Unmarshal(body, &text); err != nil || text.ID != strconv.Itoa(id) {
			return causeOther, fmt.Errorf("bad answer for image %d: %q", id, body)
		}
		return "", nil
	case http.StatusTooManyRequests:
		return cause429, nil
	case http.StatusInternalServerError:
		return cause500, nil
	case http.StatusGatewayTimeout:
		return cause504, nil
	case http.StatusBadRequest:
		return cause400, nil
	}
	return causeOther, fmt.Errorf("unexpected %s: %q", res.Status, bytes.TrimSpace(body))
}

// send sends the batch: one goroutine per image, all at once, as a batch
// job would. The concurrency limit lets cfg.concurrency of them in at a
// time; the others wait in Reserve, before their timeout starts.
func send(ctx context.Context, svc troupe.Service[request, response], url string, cfg config, t *tally) {
	var wg sync.WaitGroup
	for id := range cfg.requests {
		wg.Go(func() { one(ctx, svc, url, cfg, id, t) })
	}
	wg.Wait()
}

// one sends image id and records its outcome in t.
func one(ctx context.Context, svc troupe.Service[request, response], url string, cfg config, id int, t *tally) {
	p, err := svc.Reserve(ctx)
	if err != nil {
		t.done(causeOther, err, 0, false)
		return
	}
	// The image is loaded once admitted: the limit bounds memory too.
	j := makeJob(cfg.seed, id, cfg.bad)
	if j.unreadable {
		t.unreadable()
	}
	req, err := j.request(url)
	if err != nil {
		_ = p.Release()
		t.done(causeOther, err, 0, true)
		return
	}
	start := time.Now()
	res, err := p.Call(ctx, req)
	latency := time.Since(start)
	cause, detail := classify(id, res, err)
	t.done(cause, detail, latency, true)
}
