-- Put a record, evicting expired and then the oldest records past the
-- bounds, atomically.
-- KEYS: 1 the record (hash), 2 order (zset key -> put sequence), 3 sizes
-- (hash key -> size), 4 bytes (integer), 5 seq (integer).
-- ARGV: 1 response, 2 transcript, 3 expires (20-digit ns), 4 size, 5 now
-- (20-digit ns), 6 max entries (0: none), 7 max bytes (0: none), 8 Redis
-- expiry ms.
local rec, order, sizes, bytesk, seqk = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local size, maxn, maxb = tonumber(ARGV[4]), tonumber(ARGV[6]), tonumber(ARGV[7])

local function drop(k)
  local sz = redis.call('HGET', sizes, k)
  if sz then redis.call('DECRBY', bytesk, sz) end
  redis.call('HDEL', sizes, k)
  redis.call('ZREM', order, k)
  redis.call('DEL', k)
end

-- A record replaced leaves first.
if redis.call('ZSCORE', order, rec) then drop(rec) end

-- Expired or vanished records, oldest first (one TTL: put order is
-- expiry order).
while true do
  local first = redis.call('ZRANGE', order, 0, 0)
  if #first == 0 then break end
  local exp = redis.call('HGET', first[1], 'expires')
  if exp and exp > ARGV[5] then break end
  drop(first[1])
end

-- The oldest records past the bounds.
while true do
  local n = redis.call('ZCARD', order)
  local b = tonumber(redis.call('GET', bytesk) or '0')
  if n == 0 or ((maxn == 0 or n + 1 <= maxn) and (maxb == 0 or b + size <= maxb)) then break end
  drop(redis.call('ZRANGE', order, 0, 0)[1])
end

redis.call('HSET', rec, 'response', ARGV[1], 'transcript', ARGV[2], 'expires', ARGV[3])
redis.call('PEXPIRE', rec, ARGV[8])
redis.call('ZADD', order, redis.call('INCR', seqk), rec)
redis.call('HSET', sizes, rec, ARGV[4])
redis.call('INCRBY', bytesk, ARGV[4])
return 1
