// Package mailbox is troupe's reservation mailbox: a bounded
// protoactor-go actor.Mailbox whose user capacity is reserved before a message
// is posted, so that a stage's readiness is a free slot in its own mailbox.
//
// A slot is taken by Reserve (waits, honouring its context), TryReserve
// (never waits) or ReserveAsync (the grant arrives later through a callback,
// for actors that must not block), filled by Post, and given back by Free.
// The mailbox never frees a slot by itself: the stage that took the message
// frees it when it hands the request on or answers it, so a request parked
// inside a stage still counts against the stage's capacity.
//
// Three queues feed the actor, in this order: system messages (protoactor's
// lifecycle and supervision), control messages (grants, timer ticks,
// completions: they need no capacity, since each answers something the stage
// already counts), and user messages. System messages are never held back by
// user capacity; the actor can pause user messages while its inner service is
// not ready and still receive control messages, so that responses and timer
// events never wait behind requests.
//
// The mailbox runs its actor on one persistent goroutine, started on the
// first message and parked on a channel when idle: waking it is one channel
// handoff, where protoactor's default dispatcher starts a goroutine per
// activation. With Inline, a poster that finds the actor idle runs it on its
// own goroutine instead, and PostFrom lets a busy actor's posts wait until it
// is handed back, so that stages under load run on several goroutines at
// once (see run.go, and docs/decisions.md for the measurements).
package mailbox
