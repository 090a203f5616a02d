-- The outbox relay's partitioned log on Redis: Kafka's semantics, as the simulated log
-- (sim/outbox/log.h) keeps them, run by Redis as one atomic script per call (EVALSHA) from
-- live/outbox/redis_log.cpp. tests/live/redis_log_test.cpp runs one trace through both and finds
-- the same offsets, repeats, assignments, deliveries and commits. Keep the two in step.
--
-- KEYS[1] the topic's name in braces ({topic}: one hash tag, one cluster slot); every key below
--         is that name and a suffix:
--   :p:<p>          partition p's records, a stream whose entry ids are 0-<offset + 1> (Kafka's
--                   dense offsets from 0), each entry one field `r`, the record as the client
--                   wrote it
--   :meta           a hash: partitions, generation; per partition end:<p> (its next offset),
--                   committed:<p>, owner:<p> (a member, "" for none)
--   :s:<producer>:<p>  an idempotent producer session on partition p: last (the last sequence
--                   written) and its five last writes b1..b5 ("first_sequence first_offset count")
--                   with next (which of them the next write replaces)
--   :members        the group's members (member -> pod); :polled and :beat, each member's last
--                   poll and heartbeat (ms, Redis's clock); :gone, the members evicted or left
--                   (member -> when), whose polls are answered `evicted` for a day (a consumer
--                   joins again as a new member)
-- ARGV[1] the operation, ARGV[2] the topic's partitions (a call with another number is refused:
--         the topic was made with another), then the operation's own:
--   produce   producer, partition, first_sequence, record...
--             -> per record: its offset, or -1 for a repeat of a sequence the session wrote with
--                this record, -2 for a repeat the session cannot tell from a new record (past
--                its five last writes, or another record: Kafka's OutOfOrderSequence)
--   poll      max_poll_interval_ms, session_timeout_ms, member, pod, max_records, generation, then
--             partition, next_offset pairs: where the member's last answer of that generation left
--             each partition it read (a Kafka consumer keeps its own position, so an answer that
--             is lost on its way is read again, not skipped)
--             -> {generation, evicted (1 or 0), partition, offset, record, partition, ...}
--   heartbeat max_poll_interval_ms, session_timeout_ms, member
--             -> 1 if it is a member, 0 if not (gone, or never polled)
--   commit    max_poll_interval_ms, session_timeout_ms, member, generation, partition, offset
--             -> 1 if applied (the member owns the partition in that generation), else 0
--   leave     max_poll_interval_ms, session_timeout_ms, member -> 1
-- A member joins at its first poll. Every call but produce first evicts the members whose last
-- poll is older than max_poll_interval or whose last heartbeat is older than session_timeout.
-- Every change of membership is an eager rebalance: a new generation, and partition p to the
-- p-th live member (by id, mod their number). A member reads each partition it owns from where
-- its answers of the current generation left it, or, new to the generation, from the committed
-- offset — so after a rebalance records given out and not committed are given out again.
-- Member ids are decimal strings, compared as numbers by length then text (past 2^53 a Lua
-- number would round them); records are opaque strings.

local base = KEYS[1]
local op = ARGV[1]
local partitions = tonumber(ARGV[2])
local meta = base .. ':meta'

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function field(name, default)
  local v = redis.call('HGET', meta, name)
  if not v then return default end
  return v
end

local function num(name)
  return tonumber(field(name, '0'))
end

local known = redis.call('HGET', meta, 'partitions')
if not known then
  redis.call('HSET', meta, 'partitions', partitions, 'generation', 0)
elseif tonumber(known) ~= partitions then
  return redis.error_reply('ERR the topic has ' .. known .. ' partitions, not ' .. ARGV[2])
end

local function stream(p)
  return base .. ':p:' .. p
end

-- (string.format, not `..`: Lua writes a number past 1e14 with an exponent.)
local function entry_id(offset)
  return string.format('0-%d', offset + 1)
end

local function id_less(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end

local function rebalance()
  local generation = redis.call('HINCRBY', meta, 'generation', 1)
  local live = redis.call('HKEYS', base .. ':members')
  table.sort(live, id_less)
  for p = 0, partitions - 1 do
    local owner = ''
    if #live > 0 then owner = live[(p % #live) + 1] end
    redis.call('HSET', meta, 'owner:' .. p, owner)
  end
  return generation
end

-- The member is out of the group (evicted, or it left) at `now`: its polls are told so for a day
-- (a consumer told once joins again as a new member; one silent for a day is long gone).
local function remove(member, now)
  redis.call('HDEL', base .. ':members', member)
  redis.call('HDEL', base .. ':polled', member)
  redis.call('HDEL', base .. ':beat', member)
  local gone = redis.call('HGETALL', base .. ':gone')
  for i = 1, #gone, 2 do
    if now - tonumber(gone[i + 1]) > 86400000 then redis.call('HDEL', base .. ':gone', gone[i]) end
  end
  redis.call('HSET', base .. ':gone', member, now)
end

-- Evicts the members past their poll interval or session; true when any was.
local function expire(now, max_poll, session)
  local any = false
  local members = redis.call('HKEYS', base .. ':members')
  for _, m in ipairs(members) do
    local polled = tonumber(redis.call('HGET', base .. ':polled', m) or now)
    local beat = tonumber(redis.call('HGET', base .. ':beat', m) or now)
    if now - polled > max_poll or now - beat > session then
      remove(m, now)
      any = true
    end
  end
  if any then rebalance() end
end

if op == 'produce' then
  local producer, p, first = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
  if p == nil or p < 0 or p >= partitions or first == nil then
    return redis.error_reply('ERR a produce names a partition of the topic and a first sequence')
  end
  local session = base .. ':s:' .. producer .. ':' .. p
  local last = tonumber(redis.call('HGET', session, 'last') or '-1')
  local out = {}
  local wrote_first, wrote_offset, wrote = nil, nil, 0
  for i = 6, #ARGV do
    local record = ARGV[i]
    local seq = first + (i - 6)
    if seq <= last then
      -- A repeat: the same record if one of the five last writes put that sequence there.
      local same = false
      for b = 1, 5 do
        local batch = redis.call('HGET', session, 'b' .. b)
        if batch then
          local fs, fo, n = string.match(batch, '^(%d+) (%d+) (%d+)$')
          fs, fo, n = tonumber(fs), tonumber(fo), tonumber(n)
          if seq >= fs and seq < fs + n then
            local offset = fo + (seq - fs)
            local at = redis.call('XRANGE', stream(p), entry_id(offset), entry_id(offset))
            -- Trimmed: read and committed, below every position.
            same = #at == 0 or at[1][2][2] == record
          end
        end
      end
      out[#out + 1] = same and -1 or -2
    else
      local offset = num('end:' .. p)
      redis.call('XADD', stream(p), entry_id(offset), 'r', record)
      redis.call('HSET', meta, 'end:' .. p, offset + 1)
      if not wrote_first then wrote_first, wrote_offset = seq, offset end
      wrote = wrote + 1
      last = seq
      out[#out + 1] = offset
    end
  end
  if wrote > 0 then
    local next = tonumber(redis.call('HGET', session, 'next') or '1')
    redis.call('HSET', session, 'last', last, 'b' .. next, string.format('%d %d %d', wrote_first, wrote_offset, wrote),
               'next', next % 5 + 1)
  end
  -- A session unused for a week is forgotten, as a broker forgets an idle producer's state.
  redis.call('EXPIRE', session, 604800)
  return out
end

local max_poll, session_timeout = tonumber(ARGV[3]), tonumber(ARGV[4])
local member = ARGV[5]
if max_poll == nil or session_timeout == nil or member == nil or not string.match(member, '^[1-9]%d*$') then
  return redis.error_reply('ERR a group call gives the intervals and a member')
end
local now = now_ms()
expire(now, max_poll, session_timeout)
local is_member = redis.call('HEXISTS', base .. ':members', member) == 1

if op == 'poll' then
  local pod, max, known = ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])
  if max == nil or max < 1 or known == nil or (#ARGV - 8) % 2 ~= 0 then
    return redis.error_reply('ERR a poll asks for a record or more, under a generation, from positions')
  end
  if redis.call('HEXISTS', base .. ':gone', member) == 1 then
    return {num('generation'), 1}
  end
  redis.call('HSET', base .. ':polled', member, now)
  redis.call('HSET', base .. ':beat', member, now)
  if not is_member then
    redis.call('HSET', base .. ':members', member, pod)
    rebalance()
  end
  local generation = num('generation')
  -- Where the member's own answers of this generation left each partition.
  local positions = {}
  if known == generation then
    for i = 9, #ARGV, 2 do positions[tonumber(ARGV[i])] = tonumber(ARGV[i + 1]) end
  end
  -- A poll is shared among the member's partitions (SimLog::fill, sim/outbox/log.h, the same
  -- way): each gives up to an equal share, then what is left of `max` goes to them in order.
  local owned, starts, firsts = {}, {}, {}
  for p = 0, partitions - 1 do
    if field('owner:' .. p, '') == member then
      owned[#owned + 1] = p
      starts[#owned] = math.max(num('committed:' .. p), positions[p] or 0)
    end
  end
  local share = math.max(1, math.floor(max / math.max(1, #owned)))
  local left = max
  for i, p in ipairs(owned) do
    firsts[i] = redis.call('XRANGE', stream(p), entry_id(starts[i]), '+', 'COUNT', share)
    left = left - #firsts[i]
  end
  local out = {generation, 0}
  local given = 0
  for i, p in ipairs(owned) do
    local entries = firsts[i]
    if left > 0 and #entries == share then
      local after = tonumber(string.match(entries[#entries][1], '^0%-(%d+)$'))  -- the next offset
      local more = redis.call('XRANGE', stream(p), entry_id(after), '+', 'COUNT', left)
      for _, e in ipairs(more) do entries[#entries + 1] = e end
      left = left - #more
    end
    for _, e in ipairs(entries) do
      if given >= max then break end
      out[#out + 1] = p
      out[#out + 1] = tonumber(string.match(e[1], '^0%-(%d+)$')) - 1
      out[#out + 1] = e[2][2]
      given = given + 1
    end
  end
  return out
elseif op == 'heartbeat' then
  if not is_member then return 0 end
  redis.call('HSET', base .. ':beat', member, now)
  return 1
elseif op == 'commit' then
  local generation, p, offset = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
  if generation == nil or p == nil or p < 0 or p >= partitions or offset == nil then
    return redis.error_reply('ERR a commit names a generation, a partition of the topic and an offset')
  end
  if not is_member or generation ~= num('generation') or field('owner:' .. p, '') ~= member then return 0 end
  local committed = math.max(num('committed:' .. p), offset)
  redis.call('HSET', meta, 'committed:' .. p, committed)
  -- Nobody reads below the committed offset again.
  redis.call('XTRIM', stream(p), 'MINID', entry_id(committed))
  return 1
elseif op == 'leave' then
  remove(member, now)
  if is_member then rebalance() end
  return 1
end
return redis.error_reply('ERR unknown operation ' .. tostring(op))
