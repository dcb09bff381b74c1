package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// slowDelay is the slow downstream's nominal service time.
const slowDelay = time.Millisecond

// slowDown is a downstream that takes slowDelay (time.Sleep) and records how
// long each call really took: on Linux the Go timer fires up to about a
// millisecond late, so a 1 ms sleep takes 1.05 to 1.2 ms here, and
// Little's-law bounds are computed from the measured time as well.
type slowDown struct{ calls, nanos atomic.Int64 }

func (s *slowDown) call(_ context.Context, v int) (int, error) {
	t := time.Now()
	time.Sleep(slowDelay)
	s.nanos.Add(int64(time.Since(t)))
	s.calls.Add(1)
	return v, nil
}

// BenchmarkSlow is the stack (limit 20 -> timeout 10 s -> retry up
// to 3 -> rate limit 1e9/s) over a downstream that takes 1 ms, driven by 64
// callers: throughput should be close to Little's law, limit / service time
// = 20 / 1 ms = 20,000 requests per second. Reported per variant:
//
//   - req/s: requests per second achieved;
//   - %nominal: req/s against 20,000/s, the bound for an exact 1 ms;
//   - down-ms: the downstream's measured mean service time;
//   - %little: req/s against limit / down-ms, the bound for the service time
//     this machine's timers really give (the mean downstream concurrency as a
//     share of the limit).
//
// chanchain runs in its hand-back mode here (the caller runs the downstream),
// as troupe does: a last stage that called a 1 ms downstream itself would
// serialise every call.
func BenchmarkSlow(b *testing.B) {
	c := stdStack
	b.Run("par64", func(b *testing.B) {
		for _, v := range []variant{
			funcstackVariant(c),
			chanchainVariant(c, true),
			troupeVariant(c),
		} {
			b.Run(v.name, func(b *testing.B) {
				var d slowDown
				newCaller, stop := v.build(b, d.call)
				defer stop()
				elapsed := runCallers(b, 64, newCaller)
				reportSlow(b, c.limit, elapsed, &d)
			})
		}
	})
}

func reportSlow(b *testing.B, lim int, elapsed time.Duration, d *slowDown) {
	rps := float64(b.N) / elapsed.Seconds()
	nominal := float64(lim) / slowDelay.Seconds()
	b.ReportMetric(rps, "req/s")
	b.ReportMetric(100*rps/nominal, "%nominal")
	if n := d.calls.Load(); n > 0 {
		mean := time.Duration(d.nanos.Load() / n)
		b.ReportMetric(float64(mean)/1e6, "down-ms")
		b.ReportMetric(100*rps*mean.Seconds()/float64(lim), "%little")
	}
}
