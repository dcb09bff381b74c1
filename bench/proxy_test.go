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
	var conns atomic.Int64
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s\n%s", r.URL.Query().Get("v"), proxyPadding)
	}))
	backend.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	backend.Start()
	defer backend.Close()
	target, _ := url.Parse(backend.URL)

	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 64
	defer base.CloseIdleConnections()
	rt, stop := v.build(b, base)
	defer stop()
	gw := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: rt,
		ErrorLog:  log.New(io.Discard, "", 0),
	})
	defer gw.Close()

	users := &http.Transport{MaxIdleConnsPerHost: 64}
	defer users.CloseIdleConnections()
	client := &http.Client{Transport: users}
	call := func(ctx context.Context, n int) (int, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodGet, gw.URL+"/?v="+strconv.Itoa(n), nil)
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

	// Warm-up: 64 requests at once open the connections a steady load uses.
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			if _, err := call(context.Background(), i); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	elapsed := runCallers(b, 64, shared(call))
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(conns.Load()), "backend-conns")
}
