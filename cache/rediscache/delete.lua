-- Delete a record that has not expired.
-- KEYS: 1 the record, 2 order, 3 sizes, 4 bytes. ARGV: 1 now (20-digit ns).
-- Returns 1 if deleted, 0 if absent or expired (an expired one is
-- dropped as well).
local exp = redis.call('HGET', KEYS[1], 'expires')
local sz = redis.call('HGET', KEYS[3], KEYS[1])
if sz then redis.call('DECRBY', KEYS[4], sz) end
redis.call('HDEL', KEYS[3], KEYS[1])
redis.call('ZREM', KEYS[2], KEYS[1])
redis.call('DEL', KEYS[1])
if exp and exp > ARGV[1] then return 1 end
return 0
