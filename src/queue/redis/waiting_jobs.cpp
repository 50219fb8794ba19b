#include "waiting_jobs.hpp"

namespace gpusched::queue {

const std::string& waiting_jobs_lua()
{
    static const std::string k_lua = R"lua(
local function parse_member(member)
  local ok = string.sub(member, -1) == '!'
  return ok and string.sub(member, 1, -2) or member, ok
end
local function why_skipped(awaited, outcome)
  return 'job ' .. awaited .. ' ' .. (outcome == 'failed' and 'failed' or ('was ' .. outcome))
end
local function wait_for(prefix, id, after)
  local waits, skipped = 0, nil
  for member in string.gmatch(after, '%S+') do
    local awaited, ok = parse_member(member)
    local job = prefix .. 'job:' .. awaited
    local outcome = redis.call('HGET', job, 'outcome')
    if outcome then
      if ok and outcome ~= 'succeeded' and not skipped then
        skipped = why_skipped(awaited, outcome)
      end
    elseif redis.call('EXISTS', job) == 1 then
      waits = waits + 1
      redis.call('SADD', prefix .. 'after:' .. awaited, id .. (ok and '!' or ''))
    end
  end
  return waits, skipped
end
local function skip(prefix, id, note, now)
  local job = prefix .. 'job:' .. id
  redis.call('HSET', job, 'outcome', 'skipped', 'exit', 0, 'signal', 0, 'runtime', 0,
             'note', note, 'ended', now)
  redis.call('HDEL', job, 'waits')
  redis.call('SREM', prefix .. 'waiting', id)
  local done = prefix .. 'batch:' .. (redis.call('HGET', job, 'batch') or '0') .. ':done'
  redis.call('RPUSH', done, id)
  redis.call('EXPIRE', done, 604800)
  redis.call('EXPIRE', job, 604800)
  redis.call('ZADD', prefix .. 'ended', now, id)
  redis.call('HINCRBY', prefix .. 'stats', 'skipped', 1)
  redis.call('RPUSH', prefix .. 'failures', id)
  redis.call('LTRIM', prefix .. 'failures', -1000, -1)
end
local function settle(prefix, id, outcome, now)
  local ended = {{id, outcome}}
  while #ended > 0 do
    local top = table.remove(ended)
    local dependents = prefix .. 'after:' .. top[1]
    for _, member in ipairs(redis.call('SMEMBERS', dependents)) do
      local dependent, ok = parse_member(member)
      local job = prefix .. 'job:' .. dependent
      if redis.call('HEXISTS', job, 'waits') == 1 then
        if ok and top[2] ~= 'succeeded' then
          skip(prefix, dependent, 'skipped: ' .. why_skipped(top[1], top[2]), now)
          ended[#ended + 1] = {dependent, 'skipped'}
        elseif redis.call('HINCRBY', job, 'waits', -1) <= 0 then
          redis.call('HDEL', job, 'waits')
          redis.call('SREM', prefix .. 'waiting', dependent)
          place(prefix .. 'pending', prefix .. 'rank', dependent,
                tonumber(redis.call('HGET', job, 'priority') or '0'), false,
                redis.call('HGET', job, 'batch') or '0')
        end
      end
    end
    redis.call('DEL', dependents)
  end
end
)lua";
    return k_lua;
}

} // namespace gpusched::queue
