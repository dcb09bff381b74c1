package redisquota_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/redisquota"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: QF4 — two processes' Limiters on one key with different rates (a
// rolling deploy that changes it): the second to sync logs a warning
// naming both settings, and Check returns the error; the first learns it
// at its next sync (CheckEvery), and both report it in Stats. Once the
// other is gone (its entry not renewed), they agree again.
func TestLimitersSharingAKeyWithDifferentRatesAreTold(t *testing.T) {
	t.Parallel()
	r := startRedis(t)
	ctx := context.Background()
	oldLog, newLog := &troupetest.Log{}, &troupetest.Log{}
	const every = 200 * time.Millisecond
	old, err := redisquota.NewLimiter(r.client(t), t.Name(), ratelimit.Rate{Num: 5, Per: time.Second},
		redisquota.CheckEvery(every), redisquota.Logger(oldLog.Logger()))
	require.NoError(t, err)
	_, _, err = old.Allow(ctx)
	require.NoError(t, err)
	require.NoError(t, old.Check(ctx), "alone on the key")

	updated, err := redisquota.NewLimiter(r.client(t), t.Name(), ratelimit.Rate{Num: 10, Per: time.Second}, redisquota.Burst(2),
		redisquota.CheckEvery(every), redisquota.Logger(newLog.Logger()))
	require.NoError(t, err)
	_, _, err = updated.Allow(ctx)
	require.NoError(t, err)
	assert.Contains(t, newLog.String(), "processes share the key with different settings")
	assert.Contains(t, newLog.String(), `settings="10 per 1s, burst 2" others="5 per 1s, burst 1"`)
	err = updated.Check(ctx)
	require.ErrorIs(t, err, redisquota.ErrSettingsDiffer)
	var se *redisquota.SettingsError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, redisquota.SettingsError{Key: updated.Key(), Mine: "10 per 1s, burst 2", Others: []string{"5 per 1s, burst 1"}}, *se)
	assert.Equal(t, []string{"5 per 1s, burst 1"}, updated.Stats().Disagree)

	require.True(t, waitFor(patience, func() bool { // at the old one's next sync
		_, _, err := old.Allow(ctx)
		return err == nil && old.Stats().Disagree != nil
	}))
	assert.Contains(t, oldLog.String(), `settings="5 per 1s, burst 1" others="10 per 1s, burst 2"`)
	assert.Equal(t, []string{"10 per 1s, burst 2"}, old.Stats().Disagree)

	// The old process is gone: after three of its syncs' time, its entry
	// is dropped.
	require.True(t, waitFor(patience, func() bool { return updated.Check(ctx) == nil }), "agreed again")
	assert.Nil(t, updated.Stats().Disagree)
	assert.Contains(t, newLog.String(), "every process sharing the key now has these settings")
}

// spec: QF4 — the same for Budgets: two sizes on one key.
func TestBudgetsSharingAKeyWithDifferentSizesAreTold(t *testing.T) {
	t.Parallel()
	r := startRedis(t)
	ctx := context.Background()
	log := &troupetest.Log{}
	a, err := newBudget(t, r.client(t), t.Name(), 20, redisquota.Logger(discard()))
	require.NoError(t, err)
	require.NoError(t, a.Check(ctx))
	b, err := newBudget(t, r.client(t), t.Name(), 30, redisquota.Logger(log.Logger()))
	require.NoError(t, err)
	l, err := b.TryAcquire(ctx)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	assert.Contains(t, log.String(), `settings="budget 30, lease TTL 10s" others="budget 20, lease TTL 10s"`)
	var se *redisquota.SettingsError
	require.ErrorAs(t, b.Check(ctx), &se)
	assert.Equal(t, []string{"budget 20, lease TTL 10s"}, se.Others)
	assert.ErrorAs(t, a.Check(ctx), &se, "the first one is told too, at its next sync")
	assert.Equal(t, []string{"budget 30, lease TTL 10s"}, se.Others)
	assert.Contains(t, se.Error(), "budget 20, lease TTL 10s here, budget 30, lease TTL 10s elsewhere")
}
