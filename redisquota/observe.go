package redisquota

import (
	"context"
	"log/slog"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// StageKind is the StageKind of every event a Limiter or a Budget
// reports to the observer given with the Observe option.
const StageKind = "redisquota"

// The operations whose round trips are reported (the suffix of the
// event's Stage).
const (
	OpAllow   = "allow"   // a Limiter's unit
	OpAcquire = "acquire" // a Budget's lease taken
	OpRenew   = "renew"   // a lease renewed
	OpRelease = "release" // leases given back
	OpSync    = "sync"    // settings registered, Redis's epoch checked
	OpInUse   = "inuse"   // Budget.InUse
)

// The states of EventStateChanged (From, To).
const (
	StateUp        = "up"        // Redis answers
	StateDown      = "down"      // Redis unavailable, failing closed
	StateFallback  = "fallback"  // Redis unavailable, deciding locally
	StateHeldBack  = "held-back" // a Budget's new leases held back after Redis lost them
	StateHeld      = "held"      // a lease, while its renewals find it
	StateLost      = "lost"      // a lease found expired while its call ran (Err: ErrLeaseLost)
	StateAgreed    = "agreed"    // every process of the key has this one's settings
	StateDisagreed = "disagreed" // some have other settings (Err: a *SettingsError)
)

// reporter tells the Observe option's observer what a Limiter or a
// Budget does; nil when there is none (every method is then a nil check).
// Read-only once made: safe for concurrent use.
type reporter struct {
	o        troupe.Observer
	pipeline string
	key      string
	stages   map[string]string // op -> the Stage of its round trips
	log      *slog.Logger
}

func newReporter(o options, key string) *reporter {
	if o.obs == nil {
		return nil
	}
	r := &reporter{o: o.obs, pipeline: o.pipeline, key: key, log: o.log, stages: map[string]string{}}
	for _, op := range []string{OpAllow, OpAcquire, OpRenew, OpRelease, OpSync, OpInUse} {
		r.stages[op] = key + ":" + op
	}
	return r
}

func (r *reporter) report(stage string, ev troupe.Event) {
	ev.Pipeline, ev.Stage, ev.StageKind = r.pipeline, stage, StageKind
	if err := stagekit.Guard("observer of "+stage, func() { r.o.Observe(ev) }); err != nil {
		r.log.Error("redisquota: observer panicked", "key", r.key, "event", ev.Type.String(), "err", err)
	}
}

// started reports a round trip of op about to be sent, as EventAccepted.
func (r *reporter) started(ctx context.Context, op string) {
	if r != nil {
		r.report(r.stages[op], troupe.Event{Type: troupe.EventAccepted, Context: ctx})
	}
}

// finished reports a round trip's outcome, as EventFinished: its
// latency, and its error (nil when Redis answered).
func (r *reporter) finished(ctx context.Context, op string, took time.Duration, err error) {
	if r != nil {
		r.report(r.stages[op], troupe.Event{Type: troupe.EventFinished, Context: ctx, Latency: took, Outcome: troupe.Classify(err), Err: err})
	}
}

// retried reports the attempt-th retry of op in the background, as
// EventRetried.
func (r *reporter) retried(op string, attempt int) {
	if r != nil {
		r.report(r.stages[op], troupe.Event{Type: troupe.EventRetried, Attempt: attempt})
	}
}

// changed reports a change of state, as EventStateChanged.
func (r *reporter) changed(from, to string, err error) {
	if r != nil {
		r.report(r.key, troupe.Event{Type: troupe.EventStateChanged, From: from, To: to, Err: err})
	}
}

// fellBack reports a call decided locally while Redis was unavailable,
// as EventFallback (Err: why Redis was not asked or did not answer).
func (r *reporter) fellBack(ctx context.Context, err error) {
	if r != nil {
		r.report(r.key, troupe.Event{Type: troupe.EventFallback, Context: ctx, Err: err})
	}
}
