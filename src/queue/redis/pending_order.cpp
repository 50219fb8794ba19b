#include "pending_order.hpp"

namespace gpusched::queue {

// `pending` is the one list workers take from (BLMOVE), so it holds the jobs in the order they
// run: by priority, highest first; within a priority, --front jobs (those of one submit in
// their order) before the others, each part in the order queued. The hash `rank` says where a
// job belongs when that is not "priority 0, at the back": "P", or "P:B" for a --front job of
// batch B. The scan starts at the end the job goes to and passes only the jobs it goes past,
// so a plain job joins the back at once, as a --front job of priority 0 joins the front.
const std::string& pending_order_lua()
{
    static const std::string k_lua = R"lua(
local function rank_of(r)
  if not r then return 0, nil end
  local p, b = string.match(r, '^(-?%d+):(%d+)$')
  if p then return tonumber(p), b end
  return tonumber(r), nil
end
local function place(pending, rank, id, p, front, batch)
  if front then
    redis.call('HSET', rank, id, p .. ':' .. batch)
    local i = 0
    while true do
      local ids = redis.call('LRANGE', pending, i, i + 99)
      if #ids == 0 then redis.call('RPUSH', pending, id) return end
      local ranks = redis.call('HMGET', rank, unpack(ids))
      for k = 1, #ids do
        local q, b = rank_of(ranks[k])
        if q < p or (q == p and b ~= batch) then
          if i == 0 and k == 1 then redis.call('LPUSH', pending, id)
          else redis.call('LINSERT', pending, 'BEFORE', ids[k], id) end
          return
        end
      end
      i = i + 100
    end
  end
  if p ~= 0 then redis.call('HSET', rank, id, p) else redis.call('HDEL', rank, id) end
  local i = -1
  while true do
    local ids = redis.call('LRANGE', pending, i - 99, i)
    if #ids == 0 then redis.call('LPUSH', pending, id) return end
    local ranks = redis.call('HMGET', rank, unpack(ids))
    for k = #ids, 1, -1 do
      if rank_of(ranks[k]) >= p then
        if i == -1 and k == #ids then redis.call('RPUSH', pending, id)
        else redis.call('LINSERT', pending, 'AFTER', ids[k], id) end
        return
      end
    end
    i = i - 100
  end
end
)lua";
    return k_lua;
}

} // namespace gpusched::queue
