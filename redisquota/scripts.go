package redisquota

import "github.com/redis/go-redis/v9"

// The Lua scripts run atomically in Redis, each in one round trip
// (EVALSHA; go-redis loads a script again with EVAL when Redis lost it,
// after a restart). Times come from Redis's own clock (TIME), so that every
// process shares one clock; numbers are written back with %.0f, so that
// Lua's floating point never prints them in exponent form. Every key a
// script touches is in KEYS and shares the quota's hash tag (keys.go).
//
// What they need of Redis: EVALSHA and Lua, TIME and INFO in scripts,
// writes after them (effects replication, the default since Redis 5),
// SET PX, ZADD XX, PEXPIRE, PTTL: Redis 5.0 or later.

// timeLua reads Redis's clock: us in microseconds, now in milliseconds.
const timeLua = `
local t = redis.call('TIME')
local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now = math.floor(us / 1000)
`

// gcraScript is the shared rate: the generic cell rate algorithm, its state
// one time per key (the theoretical arrival time, in microseconds).
//
// KEYS[1] the rate's key; ARGV[1] the interval between calls, ARGV[2] the
// burst tolerance ((burst-1) intervals), ARGV[3] the caller's deadline on
// Redis's clock (0: none), all in microseconds; ARGV[4] units the process
// granted itself while Redis was away, to count now, the first of them at
// ARGV[5] (Redis's clock, µs): they are counted as granted one interval
// apart from then on (or from the time already counted, if later). It
// returns {1, wait,
// us} when the call may go (wait: microseconds until the next unit, 0 if
// one is left now), {0, wait, us} when it may not (wait: until it may),
// and {-1, 0, us} when it came after the deadline (nothing spent: the
// caller gave up on it).
var gcraScript = redis.NewScript(timeLua + `
local dl = tonumber(ARGV[3])
if dl > 0 and us > dl then return {-1, 0, us} end
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local owed = tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if owed > 0 then tat = math.max(tat, tonumber(ARGV[5])) + owed * interval end
if tat < us then tat = us end
local due = tat - tolerance
if us < due then
  if owed > 0 then
    redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - us) / 1000) + 1)
  end
  return {0, due - us, us}
end
local next = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', next), 'PX', math.ceil((next - us) / 1000) + 1)
local wait = next - tolerance - us
if wait < 0 then wait = 0 end
return {1, wait, us}
`)

// acquireScript takes a lease of a shared budget: a member of the key's
// sorted set whose score is when it expires, in milliseconds. Expired
// leases (their process stopped renewing them) are removed first.
//
// KEYS: the leases, the epoch, the hold-back (budgetKeys.list). ARGV[1]
// the budget, ARGV[2] the lease's TTL in milliseconds, ARGV[3] the lease's
// name, ARGV[4] the caller's deadline on Redis's clock in microseconds (0:
// none), ARGV[5] the epoch the caller knows. It returns {1, us} when the
// lease is taken, {0, us} when the budget is spent, {-1, us} when the
// call came after the deadline, {-2, us} when the caller's epoch is not
// Redis's (it must sync first), {-3, us, ms} while new leases are held
// back (for ms more); nothing is taken but on 1.
var acquireScript = redis.NewScript(timeLua + `
local dl = tonumber(ARGV[4])
if dl > 0 and us > dl then return {-1, us} end
if redis.call('GET', KEYS[2]) ~= ARGV[5] then return {-2, us} end
local hold = redis.call('PTTL', KEYS[3])
if hold > 0 then return {-3, us, hold} end
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return {0, us}
end
redis.call('ZADD', KEYS[1], string.format('%.0f', now + ttl), ARGV[3])
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return {1, us}
`)

// renewScript extends a lease by its TTL from now, if it is still held;
// while new leases are held back (Redis lost them), it puts a lease it
// finds gone back. KEYS as acquireScript's; ARGV[1] the TTL in
// milliseconds, ARGV[2] the lease's name, ARGV[3] the epoch the caller
// knows. It returns 1 (renewed), 2 (put back), 0 (gone: expired or
// released) or -2 (the caller must sync first).
var renewScript = redis.NewScript(timeLua + `
if redis.call('GET', KEYS[2]) ~= ARGV[3] then return -2 end
local ttl = tonumber(ARGV[1])
local exp = redis.call('ZSCORE', KEYS[1], ARGV[2])
local back = 1
if not exp or tonumber(exp) <= now then
  redis.call('ZREM', KEYS[1], ARGV[2])
  if redis.call('PTTL', KEYS[3]) <= 0 then return 0 end
  back = 2
end
redis.call('ZADD', KEYS[1], string.format('%.0f', now + ttl), ARGV[2])
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return back
`)

// releaseScript gives leases back. KEYS[1] the budget's leases; ARGV the
// leases' names (at most maxBatch). It returns how many were held.
var releaseScript = redis.NewScript(`
return redis.call('ZREM', KEYS[1], unpack(ARGV))
`)

// maxBatch bounds the names of one releaseScript (Lua's unpack).
const maxBatch = 500

// inUseScript counts the leases held now. KEYS[1] the budget's leases.
var inUseScript = redis.NewScript(timeLua + `
return redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%.0f', now), '+inf')
`)
