package redisquota

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// A sync is the round trip a Limiter or a Budget makes at its first call,
// after every outage and every CheckEvery: it registers its settings next
// to the key and reads the other processes' (settings are compared as
// strings: "5 per 1s, burst 1", "budget 20, lease TTL 10s"), and tells the
// client Redis's clock. A Budget's sync also checks the epoch.
//
// The epoch says which Redis state the leases belong to: the run id of
// the Redis server that made it (INFO server) and when. A Redis restarted
// without persistence lost it, with the leases; a replica promoted by a
// failover, or a restart that loaded a dump, has the old server's run id
// in it, and maybe not the last leases. Either way the leases of the calls
// running now are not all in Redis, and new ones would exceed the budget:
// so new leases are held back for one lease TTL (a key with that expiry),
// during which every running call's renewal puts its lease back (they
// come every third of the TTL). The epoch is made again; every client
// knows the epoch it last saw, the acquire and renew scripts refuse a
// client whose epoch is not Redis's, and the client then syncs, so any
// process that held leases before sees the change at its next round trip.
// A missing epoch holds the budget back only when the client that finds
// it missing knew one (a fresh key, first used, is not held back).

// confLua registers the caller's settings in the conf hash (KEYS[1]) and
// collects the others' into others. ARGV[1] the settings, ARGV[2] how
// long (ms) an entry lives without being registered again.
const confLua = `
redis.call('HSET', KEYS[1], ARGV[1], string.format('%.0f', now))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local others = {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if all[i] ~= ARGV[1] then
    if tonumber(all[i + 1]) + tonumber(ARGV[2]) < now then
      redis.call('HDEL', KEYS[1], all[i])
    else
      others[#others + 1] = all[i]
    end
  end
end
`

// rateSyncScript is a Limiter's sync. KEYS[1] the conf hash; ARGV as
// confLua's. It returns {us, other settings...}.
var rateSyncScript = redis.NewScript(timeLua + confLua + `
return {us, unpack(others)}
`)

// budgetSyncScript is a Budget's sync. KEYS: the conf hash, the epoch, the
// hold-back; ARGV[1], ARGV[2] as confLua's, ARGV[3] the lease TTL (ms),
// ARGV[4] the epoch the client knows (”: none). It returns {us, epoch,
// hold-back ms left, other settings...}.
var budgetSyncScript = redis.NewScript(timeLua + confLua + `
local ttl = tonumber(ARGV[3])
local run = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)') or '?'
local epoch = redis.call('GET', KEYS[2])
local hold = 0
if not epoch then
  epoch = run .. ':' .. string.format('%.0f', now)
  redis.call('SET', KEYS[2], epoch)
  if ARGV[4] ~= '' then hold = ttl end
elseif string.match(epoch, '^[^:]*') ~= run then
  epoch = run .. ':' .. string.format('%.0f', now)
  redis.call('SET', KEYS[2], epoch)
  hold = ttl
elseif ARGV[4] ~= '' and ARGV[4] ~= epoch then
  hold = tonumber(string.match(epoch, ':(%d+)$') or '0') + ttl - now
end
if hold > 0 and redis.call('PTTL', KEYS[3]) < hold then
  redis.call('SET', KEYS[3], '1', 'PX', string.format('%.0f', hold))
end
local left = redis.call('PTTL', KEYS[3])
if left < 0 then left = 0 end
return {us, epoch, left, unpack(others)}
`)

// syncer is the client's side of the syncs: when the next is due, what
// the last told. Safe for concurrent use.
type syncer struct {
	key      string // never changed
	settings string // never changed
	every    time.Duration
	h        *health

	epoch   atomic.Value // the epoch last seen (a Budget's; a string, kept boxed for the scripts); nil before the first sync
	next    atomic.Int64 // health.now() when the next sync is due; 0 before the first
	outages atomic.Int64 // health.outages at the last sync

	mu     sync.Mutex
	others []string // the other settings last read; guarded by mu
}

func newSyncer(key, settings string, every time.Duration, h *health) *syncer {
	return &syncer{key: key, settings: settings, every: every, h: h}
}

// due reports whether a call should sync first, and claims the sync: of
// calls that come at once, one syncs (all of them before the first).
func (s *syncer) due() bool {
	next := s.next.Load()
	switch {
	case next == 0:
		return true
	case s.h.outages.Load() != s.outages.Load():
	case s.h.now() < next:
		return false
	}
	return s.next.CompareAndSwap(next, s.h.now()+int64(s.every))
}

// stale is how long an entry of the conf hash lives unrenewed: three
// syncs of its process.
func (s *syncer) stale() int64 { return 3 * s.every.Milliseconds() }

// synced records a sync's answers: the outages it covers (read before the
// round trip), and the other settings.
func (s *syncer) synced(outages int64, others []string) {
	s.outages.Store(outages)
	s.next.Store(s.h.now() + int64(s.every))
	slices.Sort(others)
	s.mu.Lock()
	before := s.others
	s.others = others
	s.mu.Unlock()
	if slices.Equal(before, others) {
		return
	}
	if len(others) == 0 {
		s.h.log.Info("redisquota: every process sharing the key now has these settings", "key", s.key, "settings", s.settings)
		s.h.rep.changed(StateDisagreed, StateAgreed, nil)
		return
	}
	err := &SettingsError{Key: s.key, Mine: s.settings, Others: others}
	s.h.log.Warn("redisquota: processes share the key with different settings", "key", s.key,
		"settings", s.settings, "others", strings.Join(others, "; "))
	s.h.rep.changed(StateAgreed, StateDisagreed, err)
}

// disagreement returns a *SettingsError when the last sync read other
// settings, else nil.
func (s *syncer) disagreement() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.others) == 0 {
		return nil
	}
	return &SettingsError{Key: s.key, Mine: s.settings, Others: slices.Clone(s.others)}
}

func (s *syncer) disagree() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.others)
}

// strings returns the elements of a script's reply from i on, as strings.
func replyStrings(r []any, i int) []string {
	var out []string
	for ; i < len(r); i++ {
		if s, ok := r[i].(string); ok {
			out = append(out, s)
		}
	}
	return out
}
