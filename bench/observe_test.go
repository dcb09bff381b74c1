package bench

import (
	"context"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupeotel"
)

// counter is an observer that counts events by type: the cheapest useful
// observer, allocation-free.
type counter struct{ n [16]atomic.Int64 }

func (c *counter) Observe(ev troupe.Event) { c.n[ev.Type&15].Add(1) }

// observedVariant is the troupe variant with the observer obs attached to
// the stack.
func observedVariant(c stackConfig, name string, obs func(b *testing.B) troupe.Observer) variant {
	return troupeWith(name, func(b *testing.B) stages.Builder[int, int] {
		return troupeBuilder(c).Observe(obs(b), "bench")
	})
}

func counting(*testing.B) troupe.Observer { return &counter{} }

// otelObserver is troupeotel's observer over the OpenTelemetry SDK's meter
// provider (a manual reader, never read), and with spans, over its tracer
// provider (sampling every span, exporting none).
func otelObserver(spans bool) func(b *testing.B) troupe.Observer {
	return func(b *testing.B) troupe.Observer {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		var opts []troupeotel.Option
		if spans {
			tp := sdktrace.NewTracerProvider()
			b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			opts = append(opts, troupeotel.WithTracerProvider(tp))
		}
		obs, err := troupeotel.New(mp, opts...)
		if err != nil {
			b.Fatal(err)
		}
		return obs
	}
}

// BenchmarkObserve is the Stack benchmark's troupe variant without and
// with an observer in the same run: a counter of events by type,
// troupeotel's metrics, and troupeotel's metrics and spans. What an
// observer costs on the 4-stage stack, one caller (seq) and 64 (par64).
func BenchmarkObserve(b *testing.B) {
	for _, mode := range []struct {
		name    string
		callers int
	}{{"seq", 1}, {"par64", 64}} {
		b.Run(mode.name, func(b *testing.B) {
			for _, v := range []variant{
				troupeVariant(stdStack),
				observedVariant(stdStack, "troupe-observed", counting),
				observedVariant(stdStack, "troupe-otel", otelObserver(false)),
				observedVariant(stdStack, "troupe-otel-spans", otelObserver(true)),
			} {
				b.Run(v.name, func(b *testing.B) {
					newCaller, stop := v.build(b, noop)
					defer stop()
					runCallers(b, mode.callers, newCaller)
				})
			}
		})
	}
}

// BenchmarkOTelMeasurement is one measurement the way troupeotel makes it
// (a counter's Add with a precomputed set of three attributes) on the
// OpenTelemetry SDK alone: the unit of troupeotel's cost per request.
func BenchmarkOTelMeasurement(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	c, err := mp.Meter("bench").Int64Counter("bench.calls")
	if err != nil {
		b.Fatal(err)
	}
	opt := metric.WithAttributeSet(attribute.NewSet(attribute.String("a", "bench"), attribute.String("b", "limit"), attribute.String("c", "limit")))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c.Add(ctx, 1, opt)
	}
}
