-- The rate limiter of model/resilience/limiters.h, run by Redis as one atomic script (EVALSHA):
-- the shared store's side of the KeyValue port (model/resilience/kv.h). It makes the same
-- decisions as relaysim::Limiter for the same calls, which tests/live/redis_limiter_test.cpp
-- checks call by call on a real redis-server, for all four algorithms, across window edges and
-- a restart that loses the data. Keep the two in step: the C++ is the rule, this is its copy.
--
-- KEYS[1] the limiter's state (a hash), KEYS[2] its sliding log (a list), KEYS[3] the log's
--         members (a hash: member -> entries); callers name them {key}, {key}:log, {key}:members
--         (one hash tag: a Redis Cluster keeps all three in one slot).
-- ARGV    op (take | peek | force), algorithm (sliding_log | sliding_counter | token_bucket | gcra),
--         limit, window (ns), burst (0: the limit), cost, member (decimal; 0: anonymous),
--         now (ns since the epoch, decimal; empty: the server's clock, TIME).
-- Returns {admitted (1 or 0), retry_after (ns, decimal; "max": never)}.
--
-- Redis's Lua has only doubles, exact for integers below 2^53, and the limiter's arithmetic needs
-- 128 bits (a time in ns times a limit). Every such quantity here is a big number: an array of
-- 24-bit limbs, least significant first, with no zero limb at the top (zero is {}), so that a
-- product of two limbs plus carries stays below 2^53. Counts (a window's admissions, the log's
-- cost) stay plain numbers: they are far below 2^53.
--
-- A key met with another spec starts afresh under the new one, as the model's keyed limiters do.
-- A time earlier than the key's last one counts as the last one (the model asserts it never
-- comes; TIME can step back). The keys expire once idle long enough that a fresh start decides
-- the same (see the end), by Redis's clock: with a caller's time (a test's trace) that holds only
-- while the trace's time runs no slower than Redis's. A call the script cannot take (an unknown
-- operation or algorithm, a value out of the model's bounds) is refused before anything changes.

local B = 16777216 -- 2^24

local function trim(a)
  while #a > 0 and a[#a] == 0 do a[#a] = nil end
  return a
end

local function N(x) -- from a non-negative integer below 2^53
  local a = {}
  while x > 0 do
    local limb = x % B
    a[#a + 1] = limb
    x = (x - limb) / B
  end
  return a
end

local function cmp(a, b)
  if #a ~= #b then return #a < #b and -1 or 1 end
  for i = #a, 1, -1 do
    if a[i] ~= b[i] then return a[i] < b[i] and -1 or 1 end
  end
  return 0
end

local function add(a, b)
  local r, carry = {}, 0
  for i = 1, math.max(#a, #b) do
    local s = (a[i] or 0) + (b[i] or 0) + carry
    carry = s >= B and 1 or 0
    r[i] = s - carry * B
  end
  if carry > 0 then r[#r + 1] = carry end
  return r
end

local function sub(a, b) -- a >= b
  local r, borrow = {}, 0
  for i = 1, #a do
    local s = a[i] - (b[i] or 0) - borrow
    borrow = s < 0 and 1 or 0
    r[i] = s + borrow * B
  end
  return trim(r)
end

local function mul(a, b)
  if #a == 0 or #b == 0 then return {} end
  local r = {}
  for i = 1, #a + #b do r[i] = 0 end
  for i = 1, #a do
    local carry = 0
    for j = 1, #b do
      local t = r[i + j - 1] + a[i] * b[j] + carry -- below 2^48 + 2^25: exact
      carry = math.floor(t / B)
      r[i + j - 1] = t - carry * B
    end
    local k = i + #b
    while carry > 0 do
      local t = r[k] + carry
      carry = math.floor(t / B)
      r[k] = t - carry * B
      k = k + 1
    end
  end
  return trim(r)
end

local function min(a, b) return cmp(a, b) <= 0 and a or b end
local function max(a, b) return cmp(a, b) >= 0 and a or b end

-- Quotient and remainder by a plain number d, 1 <= d < 2^29.
local function divmod_small(a, d)
  local q, rem = {}, 0
  for i = #a, 1, -1 do
    local t = rem * B + a[i]
    q[i] = math.floor(t / d)
    rem = t - q[i] * d
  end
  return trim(q), rem
end

-- floor(a / b) for big numbers, b > 0: long division a bit at a time.
local function div(a, b)
  if cmp(a, b) < 0 then return {} end
  local q, r = {}, {}
  for i = #a, 1, -1 do
    for bit = 23, 0, -1 do
      r = add(r, r)
      if math.floor(a[i] / 2 ^ bit) % 2 == 1 then r = add(r, {1}) end
      if cmp(r, b) >= 0 then
        r = sub(r, b)
        q[i] = (q[i] or 0) + 2 ^ bit
      end
    end
    q[i] = q[i] or 0
  end
  return trim(q)
end

local function ceil_div(a, b) return div(add(a, sub(b, {1})), b) end

local function S(s) -- from a decimal string
  local a = {}
  for i = 1, #s do
    a = add(mul(a, {10}), N(string.byte(s, i) - 48))
  end
  return a
end

local function str(a)
  if #a == 0 then return "0" end
  local parts = {}
  while #a > 0 do
    local rem
    a, rem = divmod_small(a, 1000000)
    table.insert(parts, 1, rem)
  end
  local out = tostring(parts[1])
  for i = 2, #parts do out = out .. string.format("%06d", parts[i]) end
  return out
end

-- A retry-after as the answer gives it: ns in decimal, or "max" (never) past what a signed 64-bit
-- count of nanoseconds holds (about 292 years), as the model's Duration saturates.
local kInt64Max = S("9223372036854775807")
local function duration(a)
  if cmp(a, kInt64Max) > 0 then return "max" end
  return str(a)
end

local function num(a) -- a big number below 2^53 as a plain one
  local x = 0
  for i = #a, 1, -1 do x = x * B + a[i] end
  return x
end

local state, log, members = KEYS[1], KEYS[2], KEYS[3]
local op, algorithm = ARGV[1], ARGV[2]
local limit, window_s, burst, cost, member = tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
-- What the caller may not get wrong is refused before anything is read or written.
local ops = {take = true, peek = true, force = true}
local algorithms = {sliding_log = true, sliding_counter = true, token_bucket = true, gcra = true}
local function whole(x, lo, hi) return x ~= nil and x == math.floor(x) and x >= lo and x <= hi end
-- A number of at most 19 digits, not above int64's largest (times: ns since the epoch).
local function int64(text)
  return string.match(text, "^%d+$") ~= nil and (#text < 19 or (#text == 19 and text <= "9223372036854775807"))
end
local window_ns = tonumber(window_s)
if not ops[op] or not algorithms[algorithm] or not whole(limit, 1, 1000000) or not whole(burst, 0, 1000000) or
    not whole(cost, 1, 4294967295) or not string.match(window_s, "^[1-9]%d*$") or not whole(window_ns, 1000000, 86400000000000) or
    not string.match(member, "^%d+$") or not (ARGV[8] == "" or int64(ARGV[8])) then
  error("relaysim limiter: a call this script cannot take (op, algorithm, limit, window, burst, cost, member, now)")
end
-- The spec as given (a burst of 0 and one equal to the limit are two specs, as in the model).
local spec = algorithm .. ":" .. limit .. ":" .. window_s .. ":" .. burst
if burst == 0 then burst = limit end
local w = S(window_s)
local now
if ARGV[8] == "" then
  local t = redis.call("TIME")
  now = add(mul(S(t[1]), N(1000000000)), mul(S(t[2]), N(1000)))
else
  now = S(ARGV[8])
end

if redis.call("HGET", state, "spec") ~= spec then
  redis.call("DEL", state, log, members)
  redis.call("HSET", state, "spec", spec)
end
local function get(field, default)
  local v = redis.call("HGET", state, field)
  if v then return v end
  return default
end

local last = S(get("last", "0"))
now = max(now, last)
local elapsed = sub(now, last)

-- The state as the model keeps it.
local in_log = tonumber(get("in_log", "0"))
local index = tonumber(get("index", "0"))
local prev, cur = tonumber(get("prev", "0")), tonumber(get("cur", "0"))
local capacity = mul(N(burst), w)
local tokens = S(get("tokens", str(capacity))) -- a bucket starts full
local tat = S(get("tat", "0"))

-- A log entry is "time|member|cost" with the time in 20 digits, zero-padded, so that times
-- compare as text: the log is read a page at a time and no entry's time is parsed to be compared.
local function padded(a)
  local t = str(a)
  return string.rep("0", 20 - #t) .. t
end
local function parse_entry(e)
  local at, m, c = string.match(e, "^(%d+)|(%d+)|(%d+)$")
  return at, m, tonumber(c)
end
local kPage = 128

-- advance(now)
if algorithm == "sliding_log" then
  -- Entries at or before now - window have left the window (now - window, now].
  if cmp(now, w) >= 0 then
    local cutoff = padded(sub(now, w))
    while true do
      local page = redis.call("LRANGE", log, 0, kPage - 1)
      local gone = 0
      for _, e in ipairs(page) do
        local at, m, c = parse_entry(e)
        if at > cutoff then break end
        gone = gone + 1
        in_log = in_log - c
        if m ~= "0" and redis.call("HINCRBY", members, m, -1) <= 0 then redis.call("HDEL", members, m) end
      end
      if gone > 0 then redis.call("LTRIM", log, gone, -1) end
      if gone < kPage then break end
    end
  end
elseif algorithm == "sliding_counter" then
  local i = num(div(now, w))
  if i == index + 1 then
    prev, cur = cur, 0
  elseif i ~= index then
    prev, cur = 0, 0
  end
  index = i
elseif algorithm == "token_bucket" then
  tokens = min(capacity, add(tokens, mul(N(limit), elapsed)))
end

local function decide()
  local max_cost = (algorithm == "sliding_log" or algorithm == "sliding_counter") and limit or burst
  if cost > max_cost then return 0, "max" end
  if algorithm == "sliding_log" then
    if in_log + cost <= limit then return 1, "0" end
    -- Wait until enough of the oldest entries have left.
    local left, first = in_log, 0
    while true do
      local page = redis.call("LRANGE", log, first, first + kPage - 1)
      if #page == 0 then break end
      for _, e in ipairs(page) do
        local at, _, c = parse_entry(e)
        left = left - c
        if left + cost <= limit then return 0, duration(sub(add(S(at), w), now)) end
      end
      first = first + kPage
    end
    error("relaysim limiter: an empty log admits any cost up to the limit")
  elseif algorithm == "sliding_counter" then
    local r = min(w, sub(now, mul(N(index), w)))
    local budget = mul(N(limit), w)
    if cmp(add(mul(N(prev), sub(w, r)), mul(N(cur + cost), w)), budget) <= 0 then return 1, "0" end
    if cur + cost <= limit and prev > 0 then
      local room = mul(N(limit - cur - cost), w)
      local at = sub(w, min(w, div(room, N(prev))))
      if cmp(at, w) < 0 then return 0, duration(sub(at, r)) end
    end
    local at = {}
    if cur > 0 then at = sub(w, min(w, div(mul(N(limit - cost), w), N(cur)))) end
    return 0, duration(add(sub(w, r), at))
  elseif algorithm == "token_bucket" then
    local need = mul(N(cost), w)
    if cmp(tokens, need) >= 0 then return 1, "0" end
    return 0, duration(ceil_div(sub(need, tokens), N(limit)))
  else -- gcra
    local scaled_now = mul(now, N(limit))
    local new_tat = add(max(tat, scaled_now), mul(N(cost), w))
    local tolerance = mul(N(burst), w)
    if cmp(new_tat, add(scaled_now, tolerance)) <= 0 then return 1, "0" end
    return 0, duration(ceil_div(sub(sub(new_tat, tolerance), scaled_now), N(limit)))
  end
end

local function record()
  if algorithm == "sliding_log" then
    redis.call("RPUSH", log, padded(now) .. "|" .. member .. "|" .. cost)
    if member ~= "0" then redis.call("HINCRBY", members, member, 1) end
    in_log = in_log + cost
  elseif algorithm == "sliding_counter" then
    cur = cur + cost
  elseif algorithm == "token_bucket" then
    local need = mul(N(cost), w)
    tokens = cmp(tokens, need) >= 0 and sub(tokens, need) or {} -- force may ask for more than there is
  else
    tat = add(max(tat, mul(now, N(limit))), mul(N(cost), w))
  end
end

-- force answers what the limit says, and records the call whatever it says (as the simulated
-- store does: peek, then force).
local admitted, retry_after
if op == "force" then
  admitted, retry_after = decide()
  record()
elseif op == "take" and member ~= "0" and algorithm == "sliding_log" and redis.call("HEXISTS", members, member) == 1 then
  admitted, retry_after = 1, "0" -- a member already in the window was admitted: admit it again, count it once
else
  admitted, retry_after = decide()
  if op == "take" and admitted == 1 then record() end
end

redis.call("HSET", state, "last", str(now), "in_log", in_log, "index", index, "prev", prev, "cur", cur,
           "tokens", str(tokens), "tat", str(tat))
-- A key idle this long decides as a fresh one would: two windows (a sliding log's entries have
-- left, a sliding counter's previous window is empty), a whole refill (a bucket is full again),
-- and until a GCRA's theoretical arrival time has passed (forced calls can push it far ahead).
-- By Redis's clock, which is the limiter's own in service (a caller's given time is for tests).
local idle = max(add(w, w), div(capacity, N(limit)))
local scaled_now = mul(now, N(limit))
if cmp(tat, scaled_now) > 0 then idle = max(idle, ceil_div(sub(tat, scaled_now), N(limit))) end
-- A minute's slack beyond that (memory only), and never more than PEXPIRE takes.
local idle_ms = str(min(add(div(idle, N(1000000)), N(60000)), N(1000000000000000)))
for _, k in ipairs({state, log, members}) do
  if redis.call("EXISTS", k) == 1 then redis.call("PEXPIRE", k, idle_ms) end
end
return {admitted, retry_after}
