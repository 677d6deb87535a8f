-- Reserve one request in a key's one-minute window, atomically.
-- KEYS: 1 window log (zset id -> admission ms), 2 amounts (hash id ->
-- "in out cost settled"), 3 the account's month (hash: spend, held, in
-- nano-dollars, and usage; see settle.lua).
-- ARGV: 1 id, 2 now ms, 3 window ms, 4 hold ms, 5-7 limits of requests,
-- input and output tokens (0: none), 8 input tokens, 9 output tokens,
-- 10 cost, 11 spend cap (0: none), 12 month ttl s, 13 lease ms, 14 the
-- reservation's lease (its amounts key, month key and id, "\n" between).
-- KEYS 4: the account's leases (zset lease -> expiry ms) of the
-- reservations that hold a cost; a lease that expires gives its cost
-- back to its month (and leaves the reservation holding none, so that a
-- late Settle charges all of its cost).
-- Returns: verdict (0 admitted, 1 spend cap, 2 requests, 3 input, 4
-- output), retry ms, spent (a decimal string), then limit, remaining,
-- reset ms of the three limits. It mirrors ratelimit.Memory (window.go).
local log, amt, monthk, leases = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now, win, hold = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])

-- Expired leases of the account, 100 at most: their reserved cost goes
-- back. The keys they name carry the account's hash tag, as KEYS do.
local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now, 'LIMIT', 0, 100)
for _, m in ipairs(expired) do
  local ak, mk, id = string.match(m, '^(.-)\n(.-)\n(.*)$')
  if ak then
    local v = redis.call('HGET', ak, id)
    if v then
      local a, b, c, settled = string.match(v, '^(%d+) (%d+) (%d+) (%d)$')
      if settled == '0' and c ~= '0' then
        redis.call('HINCRBY', mk, 'spend', '-' .. c)
        redis.call('HINCRBY', mk, 'held', '-' .. c)
        redis.call('HSET', ak, id, a .. ' ' .. b .. ' 0 0')
      end
    end
  end
  redis.call('ZREM', leases, m)
end
local lim = {tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])}
local want = {1, tonumber(ARGV[8]), tonumber(ARGV[9])}
local cost, cap = tonumber(ARGV[10]), tonumber(ARGV[11])

-- Drop settled reservations that left the window, and unsettled ones
-- older than hold.
local old = redis.call('ZRANGEBYSCORE', log, '-inf', now - win, 'WITHSCORES')
for i = 1, #old, 2 do
  local v = redis.call('HGET', amt, old[i])
  if (not v) or string.sub(v, -1) == '1' or tonumber(old[i + 1]) <= now - hold then
    redis.call('ZREM', log, old[i])
    redis.call('HDEL', amt, old[i])
  end
end

-- The reservations in the window, oldest first: {at, 1, in, out}.
local ents = {}
local cur = redis.call('ZRANGEBYSCORE', log, '(' .. (now - win), '+inf', 'WITHSCORES')
for i = 1, #cur, 2 do
  local v = redis.call('HGET', amt, cur[i])
  local a, b = 0, 0
  if v then
    local x, y = string.match(v, '^(%d+) (%d+)')
    a, b = tonumber(x), tonumber(y)
  end
  ents[#ents + 1] = {tonumber(cur[i + 1]), 1, a, b}
end
-- spent is the month's spend as Redis keeps it, exact; it is compared
-- with the cap as a Lua number.
local spent = redis.call('HGET', monthk, 'spend') or '0'

local function reply(verdict, retry)
  local out = {verdict, retry, spent}
  for d = 1, 3 do
    if lim[d] > 0 then
      local used, last = 0, nil
      for _, e in ipairs(ents) do
        if e[d + 1] > 0 then
          used = used + e[d + 1]
          if last == nil or e[1] > last then last = e[1] end
        end
      end
      local reset = 0
      if last ~= nil then reset = math.max(last + win - now, 0) end
      out[#out + 1] = lim[d]
      out[#out + 1] = math.max(lim[d] - used, 0)
      out[#out + 1] = reset
    else
      out[#out + 1] = 0
      out[#out + 1] = 0
      out[#out + 1] = 0
    end
  end
  return out
end

if cap > 0 and cost > 0 and tonumber(spent) + cost > cap then
  return reply(1, 0)
end

local verdict, retry = 0, 0
for d = 1, 3 do
  if lim[d] > 0 and want[d] > 0 then
    local used = 0
    for _, e in ipairs(ents) do used = used + e[d + 1] end
    if used + want[d] > lim[d] then
      local wait = win
      for _, e in ipairs(ents) do
        used = used - e[d + 1]
        if used + want[d] <= lim[d] then
          wait = e[1] + win - now
          break
        end
      end
      if verdict == 0 then verdict = d + 1 end
      if wait > retry then retry = wait end
    end
  end
end
if verdict ~= 0 then
  return reply(verdict, retry)
end

-- Every check is done: from here on nothing fails midway. The charge
-- saturates the spend at the largest int64, and the reservation keeps
-- what it charged, to give back or replace.
local charged = room(spent, ARGV[10])
redis.call('ZADD', log, now, ARGV[1])
redis.call('HSET', amt, ARGV[1], ARGV[8] .. ' ' .. ARGV[9] .. ' ' .. charged .. ' 0')
redis.call('PEXPIRE', log, hold + win)
redis.call('PEXPIRE', amt, hold + win)
if charged ~= '0' then
  redis.call('HINCRBY', monthk, 'spend', charged)
  redis.call('HINCRBY', monthk, 'held', charged)
  redis.call('EXPIRE', monthk, ARGV[12])
  spent = redis.call('HGET', monthk, 'spend')
  redis.call('ZADD', leases, now + tonumber(ARGV[13]), ARGV[14])
  redis.call('PEXPIRE', leases, hold + win)
end
ents[#ents + 1] = {now, 1, want[2], want[3]}
return reply(0, 0)
