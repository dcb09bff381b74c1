package redisquota_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/redisquota"
	"github.com/troupe-go/troupe/stages/ratelimit"
)

// spec: Q1, Q2, Q3, EG6 — a configuration the quota cannot use is an error at
// construction, never a panic.
func TestQ1_BadConfigurationIsAnError(t *testing.T) {
	good := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer good.Close()
	deaf := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer deaf.Close()
	rate := ratelimit.Rate{Num: 5, Per: time.Second}
	for name, opts := range map[string][]redisquota.Option{
		"burst 0":        {redisquota.Burst(0)},
		"timeout 0":      {redisquota.Timeout(0)},
		"negative probe": {redisquota.Probe(-time.Second)},
		"fallback 0":     {redisquota.OnUnavailable(redisquota.Fallback(0))},
		"tiny TTL":       {redisquota.LeaseTTL(time.Millisecond)},
		"poll 0":         {redisquota.Poll(0)},
		"nil option":     {redisquota.Burst(2), nil},
		"nil logger":     {redisquota.Logger(nil)},
	} {
		assert.NotPanics(t, func() {
			_, err := redisquota.NewLimiter(good, "k", rate, opts...)
			assert.ErrorIs(t, err, troupe.ErrBadConfig, name)
			_, err = redisquota.NewBudget(good, "k", 3, opts...)
			assert.ErrorIs(t, err, troupe.ErrBadConfig, name)
		})
	}
	for name, err := range map[string]error{
		"nil client":   func() error { _, err := redisquota.NewLimiter(nil, "k", rate); return err }(),
		"empty key":    func() error { _, err := redisquota.NewLimiter(good, "", rate); return err }(),
		"deaf client":  func() error { _, err := redisquota.NewLimiter(deaf, "k", rate); return err }(),
		"zero rate":    func() error { _, err := redisquota.NewLimiter(good, "k", ratelimit.Rate{}); return err }(),
		"empty budget": func() error { _, err := redisquota.NewBudget(good, "k", 0); return err }(),
		"deaf budget":  func() error { _, err := redisquota.NewBudget(deaf, "k", 1); return err }(),
		"nil budget":   func() error { _, err := redisquota.NewLimit[int, int](nil, nil, nil); return err }(),
		"burst overflows": func() error {
			_, err := redisquota.NewLimiter(good, "k", ratelimit.Rate{Num: 1, Per: time.Hour}, redisquota.Burst(1<<40))
			return err
		}(),
	} {
		var ce *troupe.ConfigError
		if assert.ErrorAs(t, err, &ce, name) {
			assert.Equal(t, "redisquota", ce.Stage, name)
		}
		assert.ErrorIs(t, err, troupe.ErrBadConfig, name)
	}
	assert.Equal(t, "fail closed", redisquota.FailClosed.String())
}
