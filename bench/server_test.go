package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

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
		runPaired(b, bare.URL, guarded.URL, "bare")
	})
}
