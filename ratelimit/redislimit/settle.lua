-- Settle a reservation, once: its window entry takes the real token
-- counts, the account's month the real cost instead of the reserved one,
-- and the month's usage counts what the request used.
-- KEYS: 1 window log, 2 amounts, 3 the account's month of the reservation
-- (hash spend, held, requests, input_tokens, cached_input_tokens,
-- output_tokens).
-- ARGV: 1 id, 2 input tokens, 3 output tokens, 4 cost, 5 month ttl s,
-- 6 requests, 7 cached input tokens, 8 its lease (see reserve.lua).
-- KEYS: 4 the account's leases.
-- Returns 1 if settled, 0 if unknown or already settled or cancelled.
local v = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[8])
if not v then return 0 end
local oldcost, settled = string.match(v, '^%d+ %d+ (%d+) (%d)$')
if settled == '1' then return 0 end
-- The counters take what they are given, saturated at the largest int64,
-- the spend counted without the reserved cost it replaces: every check
-- before the first write, so that nothing fails midway.
local function get(field) return redis.call('HGET', KEYS[3], field) or '0' end
local adds = {
  {'spend', room(without(get('spend'), oldcost), ARGV[4])},
  {'requests', room(get('requests'), ARGV[6])},
  {'input_tokens', room(get('input_tokens'), ARGV[2])},
  {'cached_input_tokens', room(get('cached_input_tokens'), ARGV[7])},
  {'output_tokens', room(get('output_tokens'), ARGV[3])},
}
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ' ' .. ARGV[3] .. ' 0 1')
-- Integers travel as strings: HINCRBY adds them exactly in 64 bits.
if oldcost ~= '0' then
  redis.call('HINCRBY', KEYS[3], 'spend', '-' .. oldcost)
  redis.call('HINCRBY', KEYS[3], 'held', '-' .. oldcost)
end
for _, a in ipairs(adds) do
  redis.call('HINCRBY', KEYS[3], a[1], a[2])
end
redis.call('EXPIRE', KEYS[3], ARGV[5])
return 1
