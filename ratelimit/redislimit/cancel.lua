-- Cancel an unsettled reservation: remove it from the window and give
-- back its reserved cost.
-- KEYS: 1 window log, 2 amounts, 3 the account's month of the reservation.
-- 4 the account's leases.
-- ARGV: 1 id, 2 its lease (see reserve.lua). Returns 1 if cancelled, 0
-- if unknown or settled.
local v = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[2])
if not v then return 0 end
local oldcost, settled = string.match(v, '^%d+ %d+ (%d+) (%d)$')
if settled == '1' then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if oldcost ~= '0' then
  redis.call('HINCRBY', KEYS[3], 'spend', '-' .. oldcost)
  redis.call('HINCRBY', KEYS[3], 'held', '-' .. oldcost)
end
return 1
