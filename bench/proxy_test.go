package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupehttp"
)

// proxyPadding makes each backend response about 1 KiB.
var proxyPadding = strings.Repeat("x", 1024)

// proxyVariant is one way of building the gateway's transport to the
// backend: rt is what ReverseProxy uses, stop tears it down.
type proxyVariant struct {
	name  string
	build func(b *testing.B, base *http.Transport) (rt http.RoundTripper, stop func())
}

// proxyVariants are ReverseProxy's transports, in table order: net/http's
// own, and troupehttp.Transport over a limit and a timeout (what a gateway
// runs), also holding the permits until the bodies end, and with a retry.
var proxyVariants = []proxyVariant{
	{"nethttp", func(_ *testing.B, base *http.Transport) (http.RoundTripper, func()) { return base, func() {} }},
	{"troupe", troupeProxy(false, false)},
	{"troupe-hold", troupeProxy(true, false)},
	{"troupe-retry", troupeProxy(false, true)},
}

func troupeProxy(hold, withRetry bool) func(*testing.B, *http.Transport) (http.RoundTripper, func()) {
	return func(b *testing.B, base *http.Transport) (http.RoundTripper, func()) {
		sys := actors.NewSystem()
		s := stages.Stack[*http.Request, *http.Response]().Limit(64).Timeout(10 * time.Second)
		if withRetry {
			s = s.Layer(troupehttp.Retry(3, nil))
		}
		st, err := s.Build(sys, troupehttp.Send(base))
		if err != nil {
			b.Fatal(err)
		}
		var opts []troupehttp.TransportOption
		if hold {
			opts = append(opts, troupehttp.HoldUntilBodyClosed())
		}
		return troupehttp.Transport(st, opts...), func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := st.Close(ctx); err != nil {
				b.Error(err)
			}
			_ = sys.Shutdown(ctx)
		}
	}
}

// BenchmarkProxy is httputil.ReverseProxy in front of a loopback backend
// answering about 1 KiB, over each transport, driven by 64 clients through
// loopback (par64): requests per second, and the backend connections the
// gateway opened (backend-conns, warm-up included). Every transport to the
// backend is an http.Transport configured as http.DefaultTransport but
// keeping 64 idle connections per host (DefaultTransport keeps 2, which
// would make every variant open a connection for most requests).
//
// The variants run in a rotated order, from a random one: on this shared
// machine the first of a run is measured in different conditions from the
// last, and across rounds (processes) the rotation spreads that over all.
func BenchmarkProxy(b *testing.B) {
	b.Run("par64", func(b *testing.B) {
		first := rand.IntN(len(proxyVariants))
		for i := range proxyVariants {
			v := proxyVariants[(first+i)%len(proxyVariants)]
			b.Run(v.name, func(b *testing.B) { runProxy(b, v) })
		}
	})
}

func runProxy(b *testing.B, v proxyVariant) {
	gw, conns, stop := startProxy(b, v)
	defer stop()
	client, done := proxyClient()
	defer done()
	call := func(ctx context.Context, n int) (int, error) { return proxyCall(ctx, client, gw, n) }
	warmProxy(b, call)
	elapsed := runCallers(b, 64, shared(call))
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(conns.Load()), "backend-conns")
}

// BenchmarkProxyPaired runs ReverseProxy over net/http's Transport and
// over troupe's side by side, each in front of a backend of its own: the
// 64 clients send their requests to one and the other in turn, so that
// both meet the same noise of this shared machine at the same moments.
// It reports each one's mean latency and their ratio (troupe/nethttp,
// latency-x; a closed loop's requests a second are its inverse), and each
// one's backend connections.
func BenchmarkProxyPaired(b *testing.B) {
	b.Run("par64", func(b *testing.B) {
		plain, plainConns, stopPlain := startProxy(b, proxyVariants[0])
		defer stopPlain()
		viaTroupe, troupeConns, stopTroupe := startProxy(b, proxyVariants[1])
		defer stopTroupe()
		runPaired(b, plain, viaTroupe, "nethttp")
		b.ReportMetric(float64(plainConns.Load()), "nethttp-conns")
		b.ReportMetric(float64(troupeConns.Load()), "troupe-conns")
	})
}

// runPaired drives the servers at base and at viaTroupe from 64 clients
// that send to one and the other in turn, and reports each one's mean
// latency (baseName-ns/req, troupe-ns/req) and their ratio (latency-x).
func runPaired(b *testing.B, base, viaTroupe, baseName string) {
	client, done := proxyClient()
	defer done()
	var took [2]atomic.Int64 // nanoseconds spent in each server's requests
	call := func(ctx context.Context, n int) (int, error) {
		url, i := base, n%2
		if i == 1 {
			url = viaTroupe
		}
		start := time.Now()
		r, err := proxyCall(ctx, client, url, n)
		took[i].Add(int64(time.Since(start)))
		return r, err
	}
	warmProxy(b, call)
	took[0].Store(0)
	took[1].Store(0)
	runCallers(b, 64, shared(call))
	half := float64(b.N) / 2
	b.ReportMetric(float64(took[0].Load())/half, baseName+"-ns/req")
	b.ReportMetric(float64(took[1].Load())/half, "troupe-ns/req")
	b.ReportMetric(float64(took[1].Load())/float64(took[0].Load()), "latency-x")
}

// startProxy starts a backend answering about 1 KiB and a ReverseProxy
// in front of it over v's transport; it returns the proxy's URL and the
// count of connections the backend accepted.
func startProxy(b *testing.B, v proxyVariant) (string, *atomic.Int64, func()) {
	conns := new(atomic.Int64)
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s\n%s", r.URL.Query().Get("v"), proxyPadding)
	}))
	backend.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	backend.Start()
	target, _ := url.Parse(backend.URL)
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 64
	rt, stop := v.build(b, base)
	gw := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: rt,
		ErrorLog:  log.New(io.Discard, "", 0),
	})
	return gw.URL, conns, func() {
		gw.Close()
		stop()
		base.CloseIdleConnections()
		backend.Close()
	}
}

// proxyClient is the clients' http.Client, and what closes its
// connections.
func proxyClient() (*http.Client, func()) {
	users := &http.Transport{MaxIdleConnsPerHost: 128}
	return &http.Client{Transport: users}, users.CloseIdleConnections
}

// proxyCall gets request n through the proxy at gw and returns the number
// the backend echoed.
func proxyCall(ctx context.Context, client *http.Client, gw string, n int) (int, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, gw+"/?v="+strconv.Itoa(n), nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(r)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("status %d: %w", resp.StatusCode, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return strconv.Atoi(strings.TrimSuffix(line, "\n"))
}

// warmProxy sends 128 requests, 64 at once, before the timed run: they
// open the connections a steady load uses.
func warmProxy(b *testing.B, call callFn) {
	var wg sync.WaitGroup
	for i := range 128 {
		wg.Go(func() {
			if _, err := call(context.Background(), i); err != nil {
				b.Error(err)
			}
		})
		if i%64 == 63 {
			wg.Wait()
		}
	}
}
