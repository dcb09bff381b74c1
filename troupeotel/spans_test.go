package troupeotel_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupeotel"
	"github.com/troupe-go/troupe/troupetest"
)

// newTracing returns an observer recording spans into an in-memory
// exporter, and a tracer for the callers' own spans.
func newTracing(t *testing.T) (*troupeotel.Observer, *tracetest.InMemoryExporter, *sdktrace.TracerProvider) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	obs, _ := newObserver(t, troupeotel.WithTracerProvider(tp))
	return obs, exp, tp
}

// spec: OB2
func TestOB2_EachAttemptIsASpanUnderTheCallersSpan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		obs, exp, tp := newTracing(t)
		n := 0
		api := actors.Func(func(ctx context.Context, v int) (int, error) {
			n++
			switch n {
			case 1:
				return 0, errFlaky
			case 2:
				<-ctx.Done() // the timeout's deadline ends this one
				return 0, ctx.Err()
			}
			return v, nil
		})
		st, err := stages.Stack[int, int]().Observe(obs, "ocr-api").
			Retry(2, nil).Timeout(time.Second).Build(sys, api)
		require.NoError(t, err)

		ctx, op := tp.Tracer("test").Start(t.Context(), "op")
		_, err = st.ReserveAndCall(ctx, 7)
		require.NoError(t, err)
		op.End()
		require.NoError(t, st.Close(t.Context()))

		spans := exp.GetSpans()
		require.Len(t, spans, 4, "three attempts and the caller's span")
		var parent tracetest.SpanStub
		var attempts []tracetest.SpanStub
		for _, s := range spans {
			if s.Name == "op" {
				parent = s
			} else {
				attempts = append(attempts, s)
			}
		}
		require.Len(t, attempts, 3)
		for _, a := range attempts {
			assert.Equal(t, troupeotel.AttemptSpanName, a.Name)
			assert.Equal(t, parent.SpanContext.SpanID(), a.Parent.SpanID(), "a child of the caller's span")
			assert.Equal(t, parent.SpanContext.TraceID(), a.SpanContext.TraceID())
			assert.Contains(t, a.Attributes, troupeotel.AttrStage.String("timeout"), "the innermost stage's")
			assert.Contains(t, a.Attributes, troupeotel.AttrPipeline.String("ocr-api"))
		}
		assert.Equal(t, codes.Error, attempts[0].Status.Code)
		assert.Equal(t, errFlaky.Error(), attempts[0].Status.Description)
		assert.Equal(t, codes.Error, attempts[1].Status.Code, "the timed-out attempt")
		assert.Equal(t, codes.Unset, attempts[2].Status.Code)
		assert.Equal(t, time.Second+time.Nanosecond, attempts[1].EndTime.Sub(attempts[1].StartTime), "the timeout fires strictly after its deadline")

		// The policies' events, on the caller's span, in order.
		var names []string
		var retries []int64
		for _, ev := range parent.Events {
			names = append(names, ev.Name)
			for _, kv := range ev.Attributes {
				if kv.Key == troupeotel.AttrAttempt {
					retries = append(retries, kv.Value.AsInt64())
				}
			}
		}
		assert.Equal(t, []string{troupeotel.EventNameRetry, troupeotel.EventNameTimeout, troupeotel.EventNameRetry}, names)
		assert.Equal(t, []int64{1, 2}, retries)
		assert.Contains(t, parent.Events[1].Attributes, attribute.String("exception.message", "timeout: request timed out after 1s"))
	})
}

// spec: OB2
func TestOB2_WithoutATracerProviderNoSpans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		obs, _ := newObserver(t)
		st, err := stages.Stack[int, int]().Observe(obs, "p").Retry(1, nil).Build(sys, actors.Func(func(_ context.Context, v int) (int, error) { return v, nil }))
		require.NoError(t, err)
		ctx, op := tp.Tracer("test").Start(t.Context(), "op")
		_, err = st.ReserveAndCall(ctx, 1)
		require.NoError(t, err)
		op.End()
		require.NoError(t, st.Close(t.Context()))
		spans := exp.GetSpans()
		require.Len(t, spans, 1)
		assert.Equal(t, "op", spans[0].Name)
		assert.Empty(t, spans[0].Events)
	})
}
