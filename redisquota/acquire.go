package redisquota

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// errLate is the cause of an acquisition or a unit that reached Redis
// after the caller's deadline: Redis answered, but too slowly to count.
var errLate = errors.New("redisquota: Redis ran the call after the caller's deadline, and refused it")

// errEpoch is the cause of a call that Redis refused twice for an epoch it
// had just given.
var errEpoch = errors.New("redisquota: the budget's epoch changed under the call twice")

// deadline is the Redis time (µs; 0: unknown) after which a round trip
// sent at start is no longer waited for: the Timeout's end, or ctx's
// deadline if sooner; the earliest Redis time it may be.
func deadline(ctx context.Context, c *redisClock, start time.Time, timeout time.Duration) int64 {
	dl := start.Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	us, _ := c.earliest(dl)
	return max(us, 0)
}

// acquire asks Redis for a lease (after a sync, when one is due or the
// script asks for it). It returns the lease, ErrFull or ErrHeldBack, or the
// round trip's error.
func (b *Budget) acquire(ctx context.Context) (*Lease, error) {
	for try := 0; ; try++ {
		if try > 0 || b.sync.due() {
			if err := b.doSync(ctx); err != nil {
				return nil, err
			}
		}
		epoch := b.sync.epoch.Load() // a string, set before the sync's due time: there once due says false
		name := b.name + "-" + strconv.FormatUint(b.seq.Add(1), 36)
		start := time.Now()
		dl := deadline(ctx, b.clock, start, b.timeout)
		var res []int64
		err := b.h.roundTrip(ctx, OpAcquire, b.timeout, func(rctx context.Context) error {
			var err error
			res, err = acquireScript.Run(rctx, b.c, b.keys.leased, b.nArg, b.ttlArg, name, dl, epoch).Int64Slice()
			if err == nil && len(res) < 2 {
				err = fmt.Errorf("redisquota: unexpected script reply %v", res)
			}
			return err
		})
		if err != nil {
			// The script may run yet, or have run with its answer lost: if
			// it took the lease, give it back once Redis answers. It ran, if
			// at all, before the deadline, so its lease expires by then plus
			// a TTL.
			b.abandoned.Add(1)
			b.rel.add(name, start.Add(b.timeout+b.ttl))
			return nil, err
		}
		got := time.Now()
		b.clock.observe(start, got, res[1])
		switch res[0] {
		case 1:
			b.notHeld()
			return b.newLease(name, got), nil
		case 0:
			b.notHeld()
			return nil, ErrFull
		case -1:
			b.h.failed(errLate)
			return nil, errLate
		case -3:
			if len(res) > 2 {
				b.heldBack(res[2])
			}
			return nil, ErrHeldBack
		case -2:
			if try == 0 {
				continue
			}
			return nil, errEpoch
		}
		return nil, fmt.Errorf("redisquota: unexpected script reply %v", res)
	}
}

// doSync syncs the budget with Redis (see sync.go).
func (b *Budget) doSync(ctx context.Context) error {
	outages := b.h.outages.Load()
	known, _ := b.sync.epoch.Load().(string)
	start := time.Now()
	var r []any
	err := b.h.roundTrip(ctx, OpSync, b.timeout, func(rctx context.Context) error {
		var err error
		r, err = budgetSyncScript.Run(rctx, b.c, b.keys.sync,
			b.sync.settings, b.sync.stale(), b.ttl.Milliseconds(), known).Slice()
		if err == nil && len(r) < 3 {
			err = fmt.Errorf("redisquota: unexpected script reply %v", r)
		}
		return err
	})
	if err != nil {
		return err
	}
	us, _ := r[0].(int64)
	epoch, _ := r[1].(string)
	left, _ := r[2].(int64)
	b.clock.observe(start, time.Now(), us)
	b.sync.epoch.Store(epoch)
	if left > 0 {
		b.heldBack(left)
	}
	b.sync.synced(outages, replyStrings(r, 3))
	return nil
}

// heldBack records that Redis holds new leases back for ms more.
func (b *Budget) heldBack(ms int64) {
	b.heldUntil.Store(b.h.now() + ms*int64(time.Millisecond))
	if b.held.CompareAndSwap(false, true) {
		b.holdBacks.Add(1)
		b.h.log.Warn("redisquota: Redis lost the budget's leases (a restart or a failover): new leases held back for one lease TTL",
			"key", b.key, "for", (time.Duration(ms) * time.Millisecond).String())
		b.h.rep.changed(StateUp, StateHeldBack, ErrHeldBack)
	}
}

// notHeld records an answer given without a hold-back.
func (b *Budget) notHeld() {
	if b.held.Load() && b.held.CompareAndSwap(true, false) {
		b.h.log.Info("redisquota: the budget's leases are no longer held back", "key", b.key)
		b.h.rep.changed(StateHeldBack, StateUp, nil)
	}
}

// renewOnce renews the lease name (syncing first when Redis asks) and
// returns the script's answer (see renewScript).
func (b *Budget) renewOnce(ctx context.Context, name string) (int64, error) {
	for try := 0; ; try++ {
		epoch := b.sync.epoch.Load()
		if epoch == nil || try > 0 {
			if err := b.doSync(ctx); err != nil {
				return 0, err
			}
			epoch = b.sync.epoch.Load()
		}
		var res int64
		err := b.h.roundTrip(ctx, OpRenew, b.timeout, func(rctx context.Context) error {
			var err error
			res, err = renewScript.Run(rctx, b.c, b.keys.leased, b.ttlArg, name, epoch).Int64()
			return err
		})
		switch {
		case err != nil:
			return 0, err
		case res == -2 && try == 0:
			continue
		case res == -2:
			return 0, errEpoch
		}
		return res, nil
	}
}

// releaseNames gives the leases names back, in one round trip.
func (b *Budget) releaseNames(ctx context.Context, names ...any) error {
	return b.h.roundTrip(ctx, OpRelease, b.timeout, func(rctx context.Context) error {
		return releaseScript.Run(rctx, b.c, b.keys.only, names...).Err()
	})
}
