-- Exact 64-bit arithmetic on counters as Redis keeps them, decimal
-- strings, which a Lua number (a double) holds exactly only below 2^53:
-- each non-negative value is two limbs, hi * 1e9 + lo. Scripts that
-- count begin with these functions, so that a counter saturates at the
-- largest int64 (as ratelimit.Memory's do) instead of failing HINCRBY
-- midway, after some writes and not others.
local INT64_MAX = '9223372036854775807'

local function limbs(s)
  local n = #s
  if n <= 9 then return 0, tonumber(s) end
  return tonumber(string.sub(s, 1, n - 9)), tonumber(string.sub(s, n - 8))
end

-- lt reports whether a < b, for non-negative a and b.
local function lt(a, b)
  local ah, al = limbs(a)
  local bh, bl = limbs(b)
  return ah < bh or (ah == bh and al < bl)
end

-- sub returns a - b, for a >= b >= 0.
local function sub(a, b)
  local ah, al = limbs(a)
  local bh, bl = limbs(b)
  local h, l = ah - bh, al - bl
  if l < 0 then h, l = h - 1, l + 1e9 end
  if h == 0 then return string.format('%d', l) end
  return string.format('%d%09d', h, l)
end

-- room returns d (d >= 0), capped so that cur + d does not pass the
-- largest int64; cur may be negative.
local function room(cur, d)
  if string.sub(cur, 1, 1) == '-' then return d end
  local left = sub(INT64_MAX, cur)
  if lt(left, d) then return left end
  return d
end

-- without returns a - b if a >= b >= 0, or '-1' (some negative value) if a
-- is negative or below b.
local function without(a, b)
  if string.sub(a, 1, 1) == '-' or lt(a, b) then return '-1' end
  return sub(a, b)
end

