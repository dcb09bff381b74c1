package redisquota

import "github.com/redis/go-redis/v9"

// The Lua scripts run atomically in Redis, each in one round trip
// (EVALSHA; go-redis loads a script again with EVAL when Redis lost it,
// after a restart). Times come from Redis's own clock (TIME), so that every
// process shares one clock; numbers are written back with %.0f, so that
// Lua's floating point never prints them in exponent form.

// gcraScript is the shared rate: the generic cell rate algorithm, its state
// one time per key (the theoretical arrival time, in microseconds).
//
// KEYS[1] the rate's key; ARGV[1] the interval between calls, ARGV[2] the
// burst tolerance ((burst-1) intervals), both in microseconds. It returns
// {1, wait} when the call may go (wait: microseconds until the next unit,
// 0 if one is left now), or {0, wait} when it may not (wait: until it may).
var gcraScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local due = tat - tolerance
if now < due then
  return {0, due - now}
end
local next = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', next), 'PX', math.ceil((next - now) / 1000) + 1)
local wait = next - tolerance - now
if wait < 0 then wait = 0 end
return {1, wait}
`)

// acquireScript takes a lease of a shared budget: a member of the key's
// sorted set whose score is when it expires, in milliseconds. Expired
// leases (their process stopped renewing them) are removed first.
//
// KEYS[1] the budget's key; ARGV[1] the budget, ARGV[2] the lease's TTL in
// milliseconds, ARGV[3] the lease's name. It returns 1 when the lease is
// taken, 0 when the budget is spent.
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], string.format('%.0f', now + ttl), ARGV[3])
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
`)

// renewScript extends a lease by its TTL from now, if it is still held. It
// returns 1, or 0 when the lease is gone (expired, or released).
//
// KEYS[1] the budget's key; ARGV[1] the TTL in milliseconds, ARGV[2] the
// lease's name.
var renewScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local exp = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not exp or tonumber(exp) <= now then
  redis.call('ZREM', KEYS[1], ARGV[2])
  return 0
end
redis.call('ZADD', KEYS[1], 'XX', string.format('%.0f', now + ttl), ARGV[2])
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
`)

// releaseScript gives a lease back. KEYS[1] the budget's key; ARGV[1] the
// lease's name. It returns 1 if the lease was held, else 0.
var releaseScript = redis.NewScript(`
return redis.call('ZREM', KEYS[1], ARGV[1])
`)

// inUseScript counts the leases held now. KEYS[1] the budget's key.
var inUseScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%.0f', now), '+inf')
`)
