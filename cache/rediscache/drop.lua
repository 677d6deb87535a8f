-- The start of every script: the store's shared keys, first in KEYS, and
-- drop, which removes a record and its place in every structure.
-- KEYS: 1 order (zset record -> put sequence), 2 sizes (hash record ->
-- size), 3 bytes (integer), 4 owners (hash record -> its owner's set),
-- 5 ocount (zset owner's set -> records), 6 obytes (zset owner's set ->
-- bytes). An owner's set is a zset of its records -> put sequence.
local order, sizes, bytesk, owners, ocount, obytes = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]

local function drop(k)
  local sz = redis.call('HGET', sizes, k)
  if sz then redis.call('DECRBY', bytesk, sz) end
  redis.call('HDEL', sizes, k)
  redis.call('ZREM', order, k)
  redis.call('DEL', k)
  -- A record put by a version before the owners' bounds has no owner.
  local o = redis.call('HGET', owners, k)
  if not o then return end
  redis.call('HDEL', owners, k)
  redis.call('ZREM', o, k)
  if redis.call('ZCARD', o) == 0 then
    redis.call('ZREM', ocount, o)
    redis.call('ZREM', obytes, o)
    return
  end
  redis.call('ZINCRBY', ocount, -1, o)
  if sz then redis.call('ZINCRBY', obytes, -tonumber(sz), o) end
end
