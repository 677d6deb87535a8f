-- Put a record, evicting expired records, then the owner's oldest past
-- the owner's bounds, then the oldest of the owner holding the most past
-- the store's bounds, atomically. Follows drop.lua.
-- KEYS: 1-6 those of drop.lua, 7 the record (hash), 8 its owner's set,
-- 9 seq (integer).
-- ARGV: 1 response, 2 transcript, 3 expires (20-digit ns), 4 size, 5 now
-- (20-digit ns), 6 max entries (0: none), 7 max bytes (0: none), 8 Redis
-- expiry ms, 9 max entries of an owner (0: none), 10 max bytes of an
-- owner (0: none).
local rec, own, seqk = KEYS[7], KEYS[8], KEYS[9]
local size, maxn, maxb = tonumber(ARGV[4]), tonumber(ARGV[6]), tonumber(ARGV[7])
local maxon, maxob = tonumber(ARGV[9]), tonumber(ARGV[10])

-- A record replaced leaves first.
drop(rec)

-- Expired or vanished records, oldest first (one TTL: put order is
-- expiry order).
while true do
  local first = redis.call('ZRANGE', order, 0, 0)
  if #first == 0 then break end
  local exp = redis.call('HGET', first[1], 'expires')
  if exp and exp > ARGV[5] then break end
  drop(first[1])
end

-- What the owner holds.
local function held()
  return redis.call('ZCARD', own), tonumber(redis.call('ZSCORE', obytes, own) or '0')
end

-- The owner's oldest past its bounds.
while true do
  local n, b = held()
  if n == 0 or ((maxon == 0 or n + 1 <= maxon) and (maxob == 0 or b + size <= maxob)) then break end
  drop(redis.call('ZRANGE', own, 0, 0)[1])
end

-- Past the store's bounds, the oldest record of the owner holding the
-- most entries (or bytes, when the entries fit), the owner's own when it
-- would hold as much. Records put by a version before the owners'
-- bounds, which no owner holds, go before: they are the oldest.
while true do
  local n = redis.call('ZCARD', order)
  local b = tonumber(redis.call('GET', bytesk) or '0')
  local overn = maxn > 0 and n + 1 > maxn
  if n == 0 or (not overn and (maxb == 0 or b + size <= maxb)) then break end
  local victim = redis.call('ZRANGE', order, 0, 0)[1]
  if redis.call('HEXISTS', owners, victim) == 1 then
    local on, ob = held()
    local idx, would = obytes, ob + size
    if overn then idx, would = ocount, on + 1 end
    local from = own
    local top = redis.call('ZREVRANGE', idx, 0, 0, 'WITHSCORES')
    if #top > 0 and (on == 0 or would < tonumber(top[2])) then from = top[1] end
    local mine = redis.call('ZRANGE', from, 0, 0)[1]
    if mine then
      victim = mine
    else
      -- An owner's set emptied behind the counters' back.
      redis.call('ZREM', ocount, from)
      redis.call('ZREM', obytes, from)
    end
  end
  drop(victim)
end

local seq = redis.call('INCR', seqk)
redis.call('HSET', rec, 'response', ARGV[1], 'transcript', ARGV[2], 'expires', ARGV[3])
redis.call('PEXPIRE', rec, ARGV[8])
redis.call('ZADD', order, seq, rec)
redis.call('HSET', sizes, rec, ARGV[4])
redis.call('INCRBY', bytesk, ARGV[4])
redis.call('ZADD', own, seq, rec)
redis.call('HSET', owners, rec, own)
redis.call('ZINCRBY', ocount, 1, own)
redis.call('ZINCRBY', obytes, size, own)
return 1
