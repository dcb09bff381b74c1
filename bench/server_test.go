package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/troupehttp"
)

// serverEcho answers the request's v and about 1 KiB, as the proxy
// benchmark's backend does.
var serverEcho = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, r.URL.Query().Get("v")+"\n"+proxyPadding)
})

// BenchmarkServerHandlerPaired serves one handler on two loopback servers,
// bare and behind troupehttp.Handler with a LoadShed in front of a Limit
// (what an HTTP server's admission stack runs), and drives both from 64
// clients in turn, so that both meet the same noise of this shared machine
// at the same moments. It reports each one's mean latency and their ratio
// (troupe/bare, latency-x).
func BenchmarkServerHandlerPaired(b *testing.B) {
	b.Run("par64", func(b *testing.B) {
		sys := actors.NewSystem()
		defer func() { _ = sys.Shutdown(context.Background()) }()
		st, err := stages.Stack[*troupehttp.ServerCall, int]().
			LoadShed(loadshed.Capacity(64)).
			Limit(64).
			Build(sys, troupehttp.Serve(serverEcho))
		if err != nil {
			b.Fatal(err)
		}
		bare := httptest.NewServer(serverEcho)
		defer bare.Close()
		guarded := httptest.NewServer(troupehttp.Handler(st))
		defer guarded.Close()
		client, done := proxyClient()
		defer done()
		var took [2]atomic.Int64 // nanoseconds spent in each server's requests
		call := func(ctx context.Context, n int) (int, error) {
			url, i := bare.URL, n%2
			if i == 1 {
				url = guarded.URL
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
		b.ReportMetric(float64(took[0].Load())/half, "bare-ns/req")
		b.ReportMetric(float64(took[1].Load())/half, "troupe-ns/req")
		b.ReportMetric(float64(took[1].Load())/float64(took[0].Load()), "latency-x")
	})
}
