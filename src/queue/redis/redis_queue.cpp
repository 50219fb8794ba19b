#include <gpusched/queue/redis/redis_queue.hpp>

#include "pending_order.hpp"
#include "waiting_jobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>

namespace gpusched::queue {
namespace {

// The protocol's scripts; docs/queue-protocol.md says what each does and why it must be one
// step. Redis runs each atomically. TIME is the server's clock, the one clock every worker
// shares, so leases compare across hosts whatever their own clocks say.

// KEYS: marker. ARGV: a new marker. Reply: the marker.
const LuaScript k_open(R"lua(
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])
)lua");

// KEYS: job:ID, pending, stats, rank, named:NAME (the ids of the jobs labelled NAME). ARGV:
// id, command, batch, seq, signature, priority, front (1 or 0), context (its digest), user,
// host (submitted from), directory, name (its label, '' for none), what it waits for (ids
// each followed by '!' where their success is needed, separated by spaces), the queue's key
// prefix, the submitter's uid ('' when not known), its --mem for listings ('' for none). Reply:
// 1 when queued (or waiting, or skipped), 0 when a job of that id was there already.
const LuaScript k_submit(pending_order_lua() + waiting_jobs_lua() + R"lua(
if redis.call('HSETNX', KEYS[1], 'command', ARGV[2]) == 0 then return 0 end
local t = redis.call('TIME')
local now = t[1] .. '.' .. string.format('%06d', t[2])
redis.call('HSET', KEYS[1], 'batch', ARGV[3], 'seq', ARGV[4], 'sig', ARGV[5],
           'submitted', now, 'priority', ARGV[6],
           'context', ARGV[8], 'user', ARGV[9], 'from', ARGV[10], 'dir', ARGV[11],
           'returned', 0)
redis.call('HINCRBY', KEYS[3], 'submitted', 1)
if ARGV[15] and ARGV[15] ~= '' then redis.call('HSET', KEYS[1], 'uid', ARGV[15]) end
if ARGV[16] and ARGV[16] ~= '' then redis.call('HSET', KEYS[1], 'mem', ARGV[16]) end
if ARGV[12] ~= '' then
  redis.call('HSET', KEYS[1], 'name', ARGV[12])
  redis.call('SADD', KEYS[5], ARGV[1])
end
if ARGV[13] ~= '' then redis.call('HSET', KEYS[1], 'after', ARGV[13]) end
local waits, skipped = wait_for(ARGV[14], ARGV[1], ARGV[13])
if skipped then
  skip(ARGV[14], ARGV[1], 'skipped: ' .. skipped, now)
elseif waits > 0 then
  redis.call('HSET', KEYS[1], 'waits', waits)
  redis.call('SADD', ARGV[14] .. 'waiting', ARGV[1])
else
  place(KEYS[2], KEYS[4], ARGV[1], tonumber(ARGV[6]), ARGV[7] == '1', ARGV[3])
end
return 1
)lua");

// KEYS: batch:B:done, batch:B:seen. Reply: the ids moved.
const LuaScript k_move_all(R"lua(
local moved = {}
while true do
  local id = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not id then break end
  moved[#moved + 1] = id
end
redis.call('EXPIRE', KEYS[2], 604800)
return moved
)lua");

// The scripts that act on one job a worker took also get the queue's marker as the worker
// saw it with the job: a queue reset since (ids start again at 1) makes them change nothing
// and reply -2, so a job of the old queue never touches one of the new.

// KEYS: job:ID, taken:WORKER, marker, pending, paused. ARGV: id, the prefix of the context
// keys (context:, of the queue's hash tag: the key is named by the job), the digest of the
// context the worker has read last (not sent again: the jobs of a submission come together).
// Reply: {marker or '', 1 and the job's fields, its context ('' when none, or the one the
// worker has) and the paused GPUs when the job is in the worker's list, else 0; 2 when the
// whole queue is paused: the job went back to the head of the queue}. The paused GPUs come
// with the job: a GPU paused since the worker last looked gets no job taken now.
const LuaScript k_fetch(R"lua(
local marker = redis.call('GET', KEYS[3]) or ''
if not redis.call('LPOS', KEYS[2], ARGV[1]) then return {marker, 0} end
if redis.call('SISMEMBER', KEYS[5], '') == 1 then
  redis.call('LREM', KEYS[2], 0, ARGV[1])
  redis.call('LPUSH', KEYS[4], ARGV[1])
  return {marker, 2}
end
local digest = redis.call('HGET', KEYS[1], 'context')
local context = ''
if digest and digest ~= '' and digest ~= ARGV[3] then
  context = redis.call('GET', ARGV[2] .. digest) or ''
end
return {marker, 1, redis.call('HGETALL', KEYS[1]), context, redis.call('SMEMBERS', KEYS[5])}
)lua");

// KEYS: job:ID, taken:WORKER, marker. ARGV: id, worker, host, gpu, started, marker.
// Reply: 1 when the job is the worker's to run, 0 when not (given to another, or ended).
const LuaScript k_start(R"lua(
if (redis.call('GET', KEYS[3]) or '') ~= ARGV[6] then return -2 end
if not redis.call('LPOS', KEYS[2], ARGV[1]) then return 0 end
if redis.call('HEXISTS', KEYS[1], 'outcome') == 1 then return 0 end
redis.call('HSET', KEYS[1], 'worker', ARGV[2], 'host', ARGV[3], 'gpu', ARGV[4],
           'started', ARGV[5])
return 1
)lua");

// KEYS: job:ID, taken:WORKER, stats, failures, batch:B:done, marker, ended, rank.
// ARGV: id, outcome, exit, signal, host, gpu, started, runtime, note, marker, out_tail,
// err_tail, complete (1 or 0), the queue's key prefix, peak (GPU memory bytes, "" unseen),
// memory re-runs (attempts run again after running out of GPU memory beside others, "" none).
// Reply: 1 when recorded, 0 when the job had its outcome already, -1 when there is no job.
// What a waiting submitter needs (the outcome, the done list) is written first: a write that
// fails halfway leaves no job unended. An ended job's record expires a week after its end.
// The jobs waiting for it are settled last.
const LuaScript k_finish(pending_order_lua() + waiting_jobs_lua() + R"lua(
if (redis.call('GET', KEYS[6]) or '') ~= ARGV[10] then return -2 end
redis.call('LREM', KEYS[2], 0, ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[1], 'outcome') == 1 then return 0 end
local t = redis.call('TIME')
local now = t[1] .. '.' .. string.format('%06d', t[2])
redis.call('HSET', KEYS[1], 'outcome', ARGV[2], 'exit', ARGV[3], 'signal', ARGV[4],
           'host', ARGV[5], 'gpu', ARGV[6], 'started', ARGV[7], 'runtime', ARGV[8],
           'note', ARGV[9], 'ended', now, 'out_tail', ARGV[11], 'err_tail', ARGV[12],
           'complete', ARGV[13])
if ARGV[15] ~= '' then redis.call('HSET', KEYS[1], 'peak', ARGV[15]) end
if ARGV[16] and ARGV[16] ~= '' then redis.call('HSET', KEYS[1], 'oom_reruns', ARGV[16]) end
redis.call('RPUSH', KEYS[5], ARGV[1])
redis.call('EXPIRE', KEYS[5], 604800)
redis.call('EXPIRE', KEYS[1], 604800)
redis.call('ZADD', KEYS[7], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', tonumber(t[1]) - 604800)
redis.call('HDEL', KEYS[8], ARGV[1])
redis.call('HINCRBY', KEYS[3], ARGV[2], 1)
if ARGV[2] ~= 'succeeded' then
  redis.call('RPUSH', KEYS[4], ARGV[1])
  redis.call('LTRIM', KEYS[4], -1000, -1)
end
settle(ARGV[14], ARGV[1], ARGV[2], now)
return 1
)lua");

// KEYS: taken:WORKER, pending, rank, job:ID, marker. ARGV: id, marker.
// Reply: 1 when passed by, 0 when not in the worker's list. A job the worker cannot run (it
// asks for more GPUs than the worker has) goes behind the queued jobs of its priority, so
// that the worker takes those rather than the same job again.
const LuaScript k_pass_by(pending_order_lua() + R"lua(
if (redis.call('GET', KEYS[5]) or '') ~= ARGV[2] then return -2 end
if redis.call('LREM', KEYS[1], 0, ARGV[1]) == 0 then return 0 end
place(KEYS[2], KEYS[3], ARGV[1], tonumber(redis.call('HGET', KEYS[4], 'priority') or '0'),
      false, redis.call('HGET', KEYS[4], 'batch') or '0')
return 1
)lua");

// KEYS: taken:WORKER, pending, stats, marker, job:ID. ARGV: id, marker.
// Reply: 1 when given back, 0 when not in the worker's list.
const LuaScript k_give_back(R"lua(
if (redis.call('GET', KEYS[4]) or '') ~= ARGV[2] then return -2 end
if redis.call('LREM', KEYS[1], 0, ARGV[1]) == 0 then return 0 end
redis.call('LPUSH', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[3], 'returned', 1)
if redis.call('EXISTS', KEYS[5]) == 1 then redis.call('HINCRBY', KEYS[5], 'returned', 1) end
return 1
)lua");

// KEYS: workers, worker:WORKER, marker. ARGV: worker, description, lease (ms), user.
// Reply: {marker or '', {workers whose leases ran out}, ms until the next lease of another
// worker runs out or -1}.
const LuaScript k_heartbeat(R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('HSET', KEYS[2], 'about', ARGV[2], 'lease_ms', ARGV[3], 'seen', now, 'user', ARGV[4])
redis.call('HSETNX', KEYS[2], 'since', now)
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
local next = -1
local soonest = redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf', 'WITHSCORES', 'LIMIT', 0, 2)
for i = 1, #soonest, 2 do
  if soonest[i] ~= ARGV[1] then
    next = tonumber(soonest[i + 1]) - now
    break
  end
end
return {redis.call('GET', KEYS[3]) or '', expired, next}
)lua");

// KEYS: workers, worker:WORKER, taken:WORKER, pending, stats, cancels:WORKER. ARGV: worker,
// the queue's key prefix (each job's own count of returns: job:ID, named by the job).
// Reply: how many jobs went back. Their order is kept, at the head of the queue.
const LuaScript k_reclaim(R"lua(
local returned = 0
while true do
  local id = redis.call('LMOVE', KEYS[3], KEYS[4], 'RIGHT', 'LEFT')
  if not id then break end
  returned = returned + 1
  if ARGV[2] and redis.call('EXISTS', ARGV[2] .. 'job:' .. id) == 1 then
    redis.call('HINCRBY', ARGV[2] .. 'job:' .. id, 'returned', 1)
  end
end
if returned > 0 then redis.call('HINCRBY', KEYS[5], 'returned', returned) end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2], KEYS[6])
return returned
)lua");

// KEYS: workers. Reply: the workers whose leases ran out (server time).
const LuaScript k_expired(R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
)lua");

Result<std::vector<std::string>> whole_list(RedisClient& redis, const std::string& list)
{
    const auto reply = redis.command({"LRANGE", list, "0", "-1"});
    if (!reply) {
        return reply.failure();
    }
    return RedisQueue::to_strings(*reply);
}

std::string new_marker()
{
    std::random_device random;
    return fmt::format("{:08x}{:08x}", random(), random());
}

} // namespace

const std::string& QueuedJob::field(const std::string& name) const
{
    static const std::string k_none;
    const auto found = fields.find(name);
    return found == fields.end() ? k_none : found->second;
}

Result<void> check_queue_name(const std::string& name)
{
    const bool valid = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.';
    });
    if (valid) {
        return {};
    }
    return Failure{FailureKind::bad_request,
                   fmt::format("--queue '{}': a name of letters, digits, '-', '_' and '.'", name)};
}

// The braces make {NAME} the hash tag: Redis Cluster keeps all of a queue's keys on one node.
RedisQueue::RedisQueue(std::string name)
    : m_name(std::move(name)), m_prefix("gpusched:{" + m_name + "}:")
{
}

std::vector<const LuaScript*> RedisQueue::scripts()
{
    std::vector<const LuaScript*> all = {&k_open,      &k_submit,  &k_move_all,  &k_fetch,
                                         &k_start,     &k_finish,  &k_give_back, &k_pass_by,
                                         &k_heartbeat, &k_reclaim, &k_expired};
    for (const auto* script : verb_scripts()) {
        all.push_back(script);
    }
    return all;
}

QueuedJob RedisQueue::to_job(const std::string& id, const RedisReply& reply)
{
    return QueuedJob{id, reply.fields()};
}

std::vector<std::string> RedisQueue::to_strings(const RedisReply& reply)
{
    std::vector<std::string> items;
    for (const auto& item : reply.elements) {
        items.push_back(item.text);
    }
    return items;
}

RedisCommand RedisQueue::open_marker(const std::string& made) const
{
    return RedisCommand::call(k_open, {key("marker")}, {made});
}

RedisCommand RedisQueue::take(const std::string& worker) const
{
    return RedisCommand::plain(
        {"BLMOVE", key("pending"), key("taken:" + worker), "LEFT", "RIGHT", "0"});
}

RedisCommand RedisQueue::fetch(const std::string& id) const
{
    return RedisCommand::plain({"HGETALL", key("job:" + id)});
}

RedisCommand RedisQueue::fetch_taken(const std::string& worker, const std::string& id,
                                     const std::string& known_context) const
{
    return RedisCommand::call(k_fetch,
                              {key("job:" + id), key("taken:" + worker), key("marker"),
                               key("pending"), key("paused")},
                              {id, key("context:"), known_context});
}

std::optional<FetchedTakenJob> RedisQueue::read_taken(const std::string& id, const RedisReply& reply)
{
    if (reply.type != RedisReply::Type::array || reply.elements.size() < 2) {
        return std::nullopt;
    }
    FetchedTakenJob taken{reply.elements[0].text,
                          reply.elements[1].integer == 1,
                          {id, {}},
                          {},
                          reply.elements[1].integer == 2,
                          std::nullopt};
    if (taken.ours && reply.elements.size() >= 3) {
        taken.job = to_job(id, reply.elements[2]);
    }
    if (taken.ours && reply.elements.size() >= 4) {
        taken.context = reply.elements[3].text;
    }
    if (taken.ours && reply.elements.size() >= 5) {
        const auto gpus = to_strings(reply.elements[4]);
        taken.paused_gpus = std::set<std::string>(gpus.begin(), gpus.end());
    }
    return taken;
}

RedisCommand RedisQueue::start(const std::string& worker, const std::string& id,
                             const std::string& host, const std::string& gpu, double started,
                             const std::string& marker) const
{
    return RedisCommand::call(k_start,
                              {key("job:" + id), key("taken:" + worker), key("marker")},
                              {id, worker, host, gpu, fmt::format("{:.6f}", started), marker});
}

RedisCommand RedisQueue::finish(const std::string& worker, const OwedResult& owed) const
{
    const auto& result = owed.result;
    const auto id = std::to_string(result.id);
    return RedisCommand::call(
        k_finish,
        {key("job:" + id), key("taken:" + worker), key("stats"), key("failures"),
         key("batch:" + owed.batch + ":done"), key("marker"), key("ended"), key("rank")},
        {id, std::string(to_string(result.state)), std::to_string(result.exit_code),
         std::to_string(result.signal), owed.host, result.gpu,
         fmt::format("{:.6f}", result.started), fmt::format("{:.6f}", result.runtime), result.note,
         owed.marker, result.out_tail, result.err_tail, result.complete ? "1" : "0", m_prefix,
         result.peak_memory > 0 ? std::to_string(result.peak_memory) : std::string(),
         result.memory_reruns > 0 ? std::to_string(result.memory_reruns) : std::string()});
}

std::optional<TakenJobReply> read_taken_job_reply(const RedisReply& reply)
{
    if (reply.type != RedisReply::Type::integer) {
        return std::nullopt;
    }
    switch (reply.integer) {
    case 1:
        return TakenJobReply::applied;
    case 0:
        return TakenJobReply::not_this_workers;
    case -1:
        return TakenJobReply::no_such_job;
    case -2:
        return TakenJobReply::queue_reset;
    default:
        return std::nullopt;
    }
}

RedisCommand RedisQueue::give_back(const std::string& worker, const std::string& id,
                                 const std::string& marker) const
{
    return RedisCommand::call(
        k_give_back,
        {key("taken:" + worker), key("pending"), key("stats"), key("marker"), key("job:" + id)},
        {id, marker});
}

RedisCommand RedisQueue::pass_by(const std::string& worker, const std::string& id,
                                 const std::string& marker) const
{
    return RedisCommand::call(
        k_pass_by,
        {key("taken:" + worker), key("pending"), key("rank"), key("job:" + id), key("marker")},
        {id, marker});
}

RedisCommand RedisQueue::heartbeat(const std::string& worker, const std::string& description,
                                 long long lease_ms, const std::string& user) const
{
    return RedisCommand::call(k_heartbeat,
                              {key("workers"), key("worker:" + worker), key("marker")},
                              {worker, description, std::to_string(lease_ms), user});
}

std::optional<HeartbeatReply> RedisQueue::read_heartbeat(const RedisReply& reply)
{
    if (reply.type != RedisReply::Type::array || reply.elements.size() != 3) {
        return std::nullopt;
    }
    std::optional<std::chrono::milliseconds> next;
    if (reply.elements[2].integer >= 0) {
        next = std::chrono::milliseconds(reply.elements[2].integer);
    }
    return HeartbeatReply{reply.elements[0].text, to_strings(reply.elements[1]), next};
}

RedisCommand RedisQueue::reclaim(const std::string& worker) const
{
    return RedisCommand::call(k_reclaim,
                              {key("workers"), key("worker:" + worker), key("taken:" + worker),
                               key("pending"), key("stats"), key("cancels:" + worker)},
                              {worker, m_prefix});
}

RedisCommand RedisQueue::taken(const std::string& worker) const
{
    return RedisCommand::plain({"LRANGE", key("taken:" + worker), "0", "-1"});
}

Result<std::string> RedisQueue::open(RedisClient& redis) const
{
    const auto reply = redis.run(open_marker(new_marker()));
    if (!reply) {
        return reply.failure();
    }
    if (reply->type != RedisReply::Type::string) {
        return Failure{"the queue's marker is not a string"};
    }
    return reply->text;
}

Result<std::string> RedisQueue::marker(RedisClient& redis) const
{
    const auto reply = redis.command({"GET", key("marker")});
    if (!reply) {
        return reply.failure();
    }
    return reply->type == RedisReply::Type::string ? reply->text : std::string();
}

Result<long long> RedisQueue::last_id(RedisClient& redis) const
{
    const auto reply = redis.command({"GET", key("next_id")});
    if (!reply) {
        return reply.failure();
    }
    return reply->type == RedisReply::Type::string ? std::atoll(reply->text.c_str()) : 0;
}

Result<long long> RedisQueue::reserve_ids(RedisClient& redis, long long count) const
{
    const auto reply = redis.command({"INCRBY", key("next_id"), std::to_string(count)});
    if (!reply) {
        return reply.failure();
    }
    return reply->integer;
}

Result<long long> RedisQueue::new_batch(RedisClient& redis) const
{
    const auto reply = redis.command({"INCR", key("next_batch")});
    if (!reply) {
        return reply.failure();
    }
    return reply->integer;
}

Result<void> RedisQueue::submit(RedisClient& redis, const std::string& batch,
                                const std::vector<NewJob>& jobs, long long priority,
                                bool front) const
{
    std::vector<RedisCommand> commands;
    for (const auto& job : jobs) {
        commands.push_back(RedisCommand::call(
            k_submit,
            {key("job:" + job.id), key("pending"), key("stats"), key("rank"),
             key("named:" + job.name)},
            {job.id, job.command, batch, job.seq, job.signature, std::to_string(priority),
             front ? "1" : "0", job.context, job.user, job.host, job.directory, job.name, job.after,
             m_prefix, job.uid, job.memory}));
    }
    const auto replies = redis.run_all(commands);
    if (!replies) {
        return replies.failure();
    }
    return {};
}

Result<void> RedisQueue::store_context(RedisClient& redis, const std::string& digest,
                                       const std::string& encoded) const
{
    const auto reply = redis.command({"SET", key("context:" + digest), encoded});
    if (!reply) {
        return reply.failure();
    }
    return {};
}

Result<std::vector<std::string>> RedisQueue::expired_workers(RedisClient& redis) const
{
    const auto reply = redis.run(RedisCommand::call(k_expired, {key("workers")}, {}));
    if (!reply) {
        return reply.failure();
    }
    return to_strings(*reply);
}

Result<long long> RedisQueue::reclaim_now(RedisClient& redis, const std::string& worker) const
{
    const auto reply = redis.run(reclaim(worker));
    if (!reply) {
        return reply.failure();
    }
    return reply->integer;
}

Result<long long> RedisQueue::worker_count(RedisClient& redis) const
{
    const auto reply = redis.command({"ZCARD", key("workers")});
    if (!reply) {
        return reply.failure();
    }
    return reply->integer;
}

Result<std::vector<std::string>>
RedisQueue::wait_ended(RedisClient& redis, const std::string& batch, double timeout_s) const
{
    // Ids move from done to seen, so one whose reply is lost with the connection is still
    // found by ended_ids() afterwards.
    const auto done = key("batch:" + batch + ":done");
    const auto seen = key("batch:" + batch + ":seen");
    const auto first =
        redis.command({"BLMOVE", done, seen, "LEFT", "RIGHT", fmt::format("{}", timeout_s)});
    if (!first) {
        return first.failure();
    }
    std::vector<std::string> ids;
    if (first->type != RedisReply::Type::string) {
        return ids; // timed out
    }
    ids.push_back(first->text);
    const auto rest = redis.run(RedisCommand::call(k_move_all, {done, seen}, {}));
    if (!rest) {
        return rest.failure();
    }
    for (const auto& id : rest->elements) {
        ids.push_back(id.text);
    }
    return ids;
}

Result<std::vector<std::string>> RedisQueue::ended_ids(RedisClient& redis,
                                                       const std::string& batch) const
{
    return whole_list(redis, key("batch:" + batch + ":seen"));
}

Result<QueuedJob> RedisQueue::fetch(RedisClient& redis, const std::string& id) const
{
    const auto reply = redis.run(fetch(id));
    if (!reply) {
        return reply.failure();
    }
    return to_job(id, *reply);
}

} // namespace gpusched::queue
