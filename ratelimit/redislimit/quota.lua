-- Take reviews and summaries from an account's plan quotas of a month and
-- count its user, or refuse and take nothing.
-- KEYS: 1 the account's month (hash fields reviews, summaries), 2 the
-- month's users (set).
-- ARGV: 1-3 quotas of reviews, summaries, users (0: none), 4 reviews,
-- 5 summaries, 6 user ('' for none), 7 ttl s, 8 the plan's fee (charged
-- to the month's spend once: field plan_fee).
-- Returns: the refused quota ('' if none), its size, the amount asked,
-- then the reviews, summaries and users used, and the fee charged. It
-- mirrors quota.go and Memory.UseQuota.
local limR, limS, limU = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local r, s, user = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local reviews = tonumber(redis.call('HGET', KEYS[1], 'reviews') or '0')
local summaries = tonumber(redis.call('HGET', KEYS[1], 'summaries') or '0')
local users = redis.call('SCARD', KEYS[2])
local newUser = user ~= '' and redis.call('SISMEMBER', KEYS[2], user) == 0
if newUser and limU > 0 and users + 1 > limU then
  return {'users', limU, 1, reviews, summaries, users, 0}
end
if r > 0 and limR > 0 and reviews + r > limR then
  return {'reviews', limR, r, reviews, summaries, users, 0}
end
if s > 0 and limS > 0 and summaries + s > limS then
  return {'summaries', limS, s, reviews, summaries, users, 0}
end
reviews = math.max(reviews + r, 0)
summaries = math.max(summaries + s, 0)
redis.call('HSET', KEYS[1], 'reviews', string.format('%d', reviews), 'summaries', string.format('%d', summaries))
redis.call('EXPIRE', KEYS[1], ARGV[7])
if newUser then
  redis.call('SADD', KEYS[2], user)
  redis.call('EXPIRE', KEYS[2], ARGV[7])
  users = users + 1
end
local fee = 0
if ARGV[8] ~= '0' and redis.call('HEXISTS', KEYS[1], 'plan_fee') == 0 then
  redis.call('HSET', KEYS[1], 'plan_fee', ARGV[8])
  redis.call('HINCRBY', KEYS[1], 'spend', ARGV[8])
  fee = tonumber(ARGV[8])
end
return {'', 0, 0, reviews, summaries, users, fee}
