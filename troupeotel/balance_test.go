package troupeotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/troupeotel"
)

// A balancer's events become metrics per endpoint: the calls picked for
// each, the endpoints in the set, and each endpoint added, removed and
// drained; a pick is an event on the caller's span, naming the endpoint.
//
// spec: OB2, BAL1
func TestABalancersPicksAndEndpointsAreMetricsPerEndpoint(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	obs, err := troupeotel.New(mp, troupeotel.WithTracerProvider(tp))
	require.NoError(t, err)

	bal, err := balance.New[string, int, int](nil, balance.Observe(obs, "replicas"))
	require.NoError(t, err)
	echo := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	bal.Insert("a", echo)
	bal.Insert("b", echo)
	ctx, op := tp.Tracer("test").Start(t.Context(), "op")
	_, err = troupe.Do[int, int](ctx, bal, 1)
	require.NoError(t, err)
	op.End()
	for i := range 19 {
		_, err := troupe.Do[int, int](context.Background(), bal, i)
		require.NoError(t, err)
	}
	bal.Remove("a")
	got := collect(t, reader)
	picks := got.ints(t, "replicas", troupeotel.MetricPicks)
	assert.Equal(t, int64(20), picks["balance a"]+picks["balance b"], "%v", picks)
	assert.Equal(t, map[string]int64{"balance": 1}, got.ints(t, "replicas", troupeotel.MetricEndpoints))

	require.NoError(t, bal.Close(context.Background()))
	got = collect(t, reader)
	assert.Equal(t, map[string]int64{"balance": 0}, got.ints(t, "replicas", troupeotel.MetricEndpoints))
	assert.Equal(t, map[string]int64{
		"balance a added": 1, "balance a removed": 1, "balance a drained": 1,
		"balance b added": 1, "balance b removed": 1, "balance b drained": 1,
	}, got.ints(t, "replicas", troupeotel.MetricEndpointChanges))

	spans := exp.GetSpans()
	require.Len(t, spans, 1)
	require.Len(t, spans[0].Events, 1)
	pick := spans[0].Events[0]
	assert.Equal(t, troupeotel.EventNamePick, pick.Name)
	var endpoint string
	for _, kv := range pick.Attributes {
		if kv.Key == troupeotel.AttrEndpoint {
			endpoint = kv.Value.AsString()
		}
	}
	assert.Contains(t, []string{"a", "b"}, endpoint)
}
