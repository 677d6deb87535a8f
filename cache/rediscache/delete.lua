-- Delete a record that has not expired. Follows drop.lua.
-- KEYS: 1-6 those of drop.lua, 7 the record. ARGV: 1 now (20-digit ns).
-- Returns 1 if deleted, 0 if absent or expired (an expired one is
-- dropped as well).
local exp = redis.call('HGET', KEYS[7], 'expires')
drop(KEYS[7])
if exp and exp > ARGV[1] then return 1 end
return 0
