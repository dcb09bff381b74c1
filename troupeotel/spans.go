package troupeotel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/troupe-go/troupe"
)

// AttemptSpanName is the name of the span of each attempt.
const AttemptSpanName = "troupe.attempt"

// The names of the span events recorded on the caller's span.
const (
	EventNameRetry    = "troupe.retry"
	EventNameHedge    = "troupe.hedge"
	EventNameTimeout  = "troupe.timeout"
	EventNameShed     = "troupe.shed"
	EventNameFallback = "troupe.fallback"
	EventNamePick     = "troupe.pick"
)

var spanEvents = [...]string{
	troupe.EventRetried:  EventNameRetry,
	troupe.EventHedged:   EventNameHedge,
	troupe.EventTimedOut: EventNameTimeout,
	troupe.EventShed:     EventNameShed,
	troupe.EventFallback: EventNameFallback,
	troupe.EventPicked:   EventNamePick,
}

var _ troupe.AttemptTracer = (*Observer)(nil)

// StartAttempt counts an attempt about to be made with ctx (the stages call
// it in place of Observe for EventStarted), starts its span, a child of
// the span in ctx, and returns ctx with it. Without a tracer provider it
// only counts, and returns ctx.
func (ob *Observer) StartAttempt(ctx context.Context, ev troupe.Event) context.Context {
	s := ob.sets.stage(ev.Pipeline, ev.Stage, ev.StageKind)
	ob.attempts.Add(ctx, 1, s.base...)
	if ob.tracer == nil {
		return ctx
	}
	ctx, _ = ob.tracer.Start(ctx, AttemptSpanName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(s.kvs...))
	return ctx
}

// EndAttempt ends the span StartAttempt put in ctx, with an error status
// and the error recorded when err is not nil.
func (ob *Observer) EndAttempt(ctx context.Context, err error) {
	if ob.tracer == nil {
		return
	}
	span := trace.SpanFromContext(ctx)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// spanEvent records a policy's event on the span of the call it is about.
func (ob *Observer) spanEvent(ev troupe.Event, s *stageSets) {
	if ob.tracer == nil || ev.Context == nil || int(ev.Type) >= len(spanEvents) || spanEvents[ev.Type] == "" {
		return
	}
	span := trace.SpanFromContext(ev.Context)
	if !span.IsRecording() {
		return
	}
	kvs := append(make([]attribute.KeyValue, 0, len(s.kvs)+2), s.kvs...)
	switch ev.Type {
	case troupe.EventRetried, troupe.EventHedged:
		kvs = append(kvs, AttrAttempt.Int(ev.Attempt))
	case troupe.EventPicked:
		kvs = append(kvs, AttrEndpoint.String(ev.Endpoint))
	}
	if ev.Err != nil {
		kvs = append(kvs, attribute.String("exception.message", ev.Err.Error()))
	}
	span.AddEvent(spanEvents[ev.Type], trace.WithAttributes(kvs...))
}
