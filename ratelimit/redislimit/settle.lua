-- Settle a reservation: its window entry takes the real token counts and
-- the month's spend the real cost instead of the reserved one.
-- KEYS: 1 window log, 2 amounts, 3 the spend of the reservation's month.
-- ARGV: 1 id, 2 input tokens, 3 output tokens, 4 cost, 5 spend ttl s.
-- Returns 1 if settled, 0 if unknown or already settled.
local v = redis.call('HGET', KEYS[2], ARGV[1])
if not v then return 0 end
local oldcost, settled = string.match(v, '^%d+ %d+ (%d+) (%d)$')
if settled == '1' then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ' ' .. ARGV[3] .. ' 0 1')
redis.call('DECRBY', KEYS[3], oldcost)
redis.call('INCRBY', KEYS[3], ARGV[4])
redis.call('EXPIRE', KEYS[3], ARGV[5])
return 1
