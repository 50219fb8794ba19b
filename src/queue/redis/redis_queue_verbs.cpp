// The Redis side of the queue commands (cancel, retry, pause, resume, queue --purge, and what
// queue, logs and wait read): their scripts and the commands that read a queue whole.
// docs/queue-protocol.md describes them with the rest of the protocol.
#include <gpusched/queue/redis/job_signature.hpp>
#include <gpusched/queue/redis/redis_queue.hpp>

#include "pending_order.hpp"
#include "waiting_jobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace gpusched::queue {
namespace {

// KEYS: cancels:WORKER, taken:WORKER, paused, stop:WORKER. Reply: {ids of the worker's jobs
// asked to stop, the paused GPUs, how the worker was asked to stop ('drain', 'now' or '')}.
// An id no longer in the worker's list (the job ended) leaves the set.
const LuaScript k_requests(R"lua(
local cancels = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('LPOS', KEYS[2], id) then cancels[#cancels + 1] = id
  else redis.call('SREM', KEYS[1], id) end
end
return {cancels, redis.call('SMEMBERS', KEYS[3]), redis.call('GET', KEYS[4]) or ''}
)lua");

// KEYS: workers, stop:WORKER. ARGV: WORKER, 'drain' or 'now'. Reply: 1 when asked, 0 when the
// queue has no such worker. A stop now is not taken back by a later drain; the request
// expires after a day (a worker gone meanwhile never reads it).
const LuaScript k_ask_stop(R"lua(
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if ARGV[2] == 'drain' and redis.call('GET', KEYS[2]) == 'now' then return 1 end
redis.call('SET', KEYS[2], ARGV[2], 'EX', 86400)
return 1
)lua");

// KEYS: job:ID, pending, stats, failures, batch:B:done, ended, rank, then taken:W and
// cancels:W of each worker. ARGV: id, the queue's key prefix.
// Reply: 'removed' (it was pending or waiting: ended as cancelled, and the jobs waiting for
// it settled), 'stopping' (flagged: the worker that has it, or the next that takes it, ends it
// as cancelled), 'ended', or 'unknown'.
const LuaScript k_cancel(pending_order_lua() + waiting_jobs_lua() + R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 then return 'unknown' end
if redis.call('HEXISTS', KEYS[1], 'outcome') == 1 then return 'ended' end
local waiting = redis.call('HDEL', KEYS[1], 'waits') == 1
if waiting then redis.call('SREM', ARGV[2] .. 'waiting', ARGV[1]) end
if waiting or redis.call('LREM', KEYS[2], 0, ARGV[1]) > 0 then
  local t = redis.call('TIME')
  local now = t[1] .. '.' .. string.format('%06d', t[2])
  redis.call('HSET', KEYS[1], 'outcome', 'cancelled', 'exit', 0, 'signal', 0, 'runtime', 0,
             'note', 'cancelled before it started', 'ended', now)
  redis.call('RPUSH', KEYS[5], ARGV[1])
  redis.call('EXPIRE', KEYS[5], 604800)
  redis.call('EXPIRE', KEYS[1], 604800)
  redis.call('ZADD', KEYS[6], now, ARGV[1])
  redis.call('HDEL', KEYS[7], ARGV[1])
  redis.call('HINCRBY', KEYS[3], 'cancelled', 1)
  redis.call('RPUSH', KEYS[4], ARGV[1])
  redis.call('LTRIM', KEYS[4], -1000, -1)
  settle(ARGV[2], ARGV[1], 'cancelled', now)
  return 'removed'
end
redis.call('HSET', KEYS[1], 'cancel', 1)
for i = 8, #KEYS, 2 do
  if redis.call('LPOS', KEYS[i], ARGV[1]) then
    redis.call('SADD', KEYS[i + 1], ARGV[1])
    break
  end
end
return 'stopping'
)lua");

// KEYS: job:ID, pending, rank, ended, stats. ARGV: id, the attempt the job was read at, the
// signature of the next attempt ('' when none is given), the queue's key prefix.
// Reply: '' when queued again (or waiting again, for what it waits for); else 'unknown',
// 'queued', 'waiting', 'running' or 'succeeded'; 'signed' when the job is signed and no
// signature of its next attempt was given, 'changed' when its attempt is no longer the one
// read; 'skipped:job ID HOW' when a job it needs to succeed did not (it would be skipped
// again).
const LuaScript k_retry(pending_order_lua() + waiting_jobs_lua() + R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 then return 'unknown' end
local outcome = redis.call('HGET', KEYS[1], 'outcome')
if not outcome then
  if redis.call('LPOS', KEYS[2], ARGV[1]) then return 'queued' end
  if redis.call('HEXISTS', KEYS[1], 'waits') == 1 then return 'waiting' end
  return 'running'
end
if outcome == 'succeeded' then return 'succeeded' end
if (redis.call('HGET', KEYS[1], 'attempt') or '0') ~= ARGV[2] then return 'changed' end
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'sig', ARGV[3])
elseif (redis.call('HGET', KEYS[1], 'sig') or '') ~= '' then
  return 'signed'
end
local waits, skipped = wait_for(ARGV[4], ARGV[1], redis.call('HGET', KEYS[1], 'after') or '')
if skipped then return 'skipped:' .. skipped end
redis.call('HDEL', KEYS[1], 'outcome', 'exit', 'signal', 'runtime', 'note', 'ended', 'out_tail',
           'err_tail', 'complete', 'cancel', 'started', 'worker', 'host', 'gpu', 'peak',
           'oom_reruns')
redis.call('PERSIST', KEYS[1])
redis.call('HINCRBY', KEYS[1], 'attempt', 1)
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('HINCRBY', KEYS[5], outcome, -1)
if waits > 0 then
  redis.call('HSET', KEYS[1], 'waits', waits)
  redis.call('SADD', ARGV[4] .. 'waiting', ARGV[1])
  return ''
end
place(KEYS[2], KEYS[3], ARGV[1], tonumber(redis.call('HGET', KEYS[1], 'priority') or '0'),
      false, redis.call('HGET', KEYS[1], 'batch') or '0')
return ''
)lua");

// KEYS: ended, failures, then job:ID, batch:B:done, batch:B:seen of each job. ARGV: the ids.
// Reply: how many ended jobs were removed (a job queued again since is left alone).
const LuaScript k_purge(R"lua(
local removed = 0
for i = 1, #ARGV do
  local id = ARGV[i]
  local job = KEYS[3 * i]
  if redis.call('HEXISTS', job, 'outcome') == 1 then
    redis.call('DEL', job)
    redis.call('LREM', KEYS[2], 0, id)
    redis.call('LREM', KEYS[3 * i + 1], 0, id)
    redis.call('LREM', KEYS[3 * i + 2], 0, id)
    removed = removed + 1
  end
  if redis.call('EXISTS', job) == 0 then redis.call('ZREM', KEYS[1], id) end
end
return removed
)lua");

} // namespace

std::vector<const LuaScript*> RedisQueue::verb_scripts()
{
    return {&k_requests, &k_cancel, &k_retry, &k_purge, &k_ask_stop};
}

RedisCommand RedisQueue::requests(const std::string& worker) const
{
    return RedisCommand::call(
        k_requests,
        {key("cancels:" + worker), key("taken:" + worker), key("paused"), key("stop:" + worker)},
        {});
}

// A worker's id is HOST:PID:RANDOM; its hash says "HOST GPUs LIST" and, in server
// milliseconds, since when it works on the queue.
WorkerRecord RedisQueue::worker_record(const std::string& id,
                                       const std::map<std::string, std::string>& fields)
{
    WorkerRecord record;
    record.id = id;
    const auto last = id.rfind(':');
    const auto pid_at =
        last == std::string::npos || last == 0 ? std::string::npos : id.rfind(':', last - 1);
    if (pid_at != std::string::npos) {
        record.host = id.substr(0, pid_at);
        record.pid = std::atoll(id.substr(pid_at + 1, last - pid_at - 1).c_str());
    }
    const auto about = fields.find("about");
    if (about != fields.end()) {
        const auto gpus_at = about->second.find(" GPUs ");
        if (gpus_at != std::string::npos) {
            record.gpus = about->second.substr(gpus_at + 6);
        }
    }
    if (const auto user = fields.find("user"); user != fields.end()) {
        record.user = user->second;
    }
    for (const char* field : {"since", "seen"}) {
        const auto found = fields.find(field);
        if (found != fields.end()) {
            record.since = std::atof(found->second.c_str()) / 1000; // server milliseconds
            break;
        }
    }
    return record;
}

Result<std::vector<WorkerRecord>> RedisQueue::workers(RedisClient& redis) const
{
    const auto ids = redis.pipeline({{"ZRANGE", key("workers"), "0", "-1"}});
    if (!ids) {
        return ids.failure();
    }
    std::vector<std::string> names = to_strings(ids->front());
    std::vector<std::vector<std::string>> reads;
    for (const auto& worker : names) {
        reads.push_back({"HGETALL", key("worker:" + worker)});
    }
    std::vector<WorkerRecord> workers;
    if (reads.empty()) {
        return workers;
    }
    const auto replies = redis.pipeline(reads);
    if (!replies) {
        return replies.failure();
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
        workers.push_back(worker_record(names[i], (*replies)[i].fields()));
    }
    return workers;
}

Result<bool> RedisQueue::ask_to_stop(RedisClient& redis, const std::string& worker, bool now) const
{
    const auto reply = redis.run(RedisCommand::call(
        k_ask_stop, {key("workers"), key("stop:" + worker)}, {worker, now ? "now" : "drain"}));
    if (!reply) {
        return reply.failure();
    }
    return reply->integer == 1;
}

std::optional<WorkerRequests> RedisQueue::read_requests(const RedisReply& reply)
{
    if (reply.type != RedisReply::Type::array || reply.elements.size() != 3) {
        return std::nullopt;
    }
    const auto paused = to_strings(reply.elements[1]);
    return WorkerRequests{
        to_strings(reply.elements[0]), {paused.begin(), paused.end()}, reply.elements[2].text};
}

Result<RedisQueue::Snapshot> RedisQueue::snapshot(RedisClient& redis, std::size_t pending_shown,
                                                  std::size_t recent_shown,
                                                  std::size_t pending_from) const
{
    // `shown` of a list or sorted set from `from` on: none is the empty range 1..0 (0..-1 is
    // all).
    const auto first = [](const char* command, std::string list, std::size_t shown,
                          std::size_t from = 0) {
        return std::vector<std::string>{command, std::move(list),
                                        shown == 0 ? "1" : std::to_string(from),
                                        shown == 0 ? "0" : std::to_string(from + shown - 1)};
    };
    const auto overview =
        redis.pipeline({{"LLEN", key("pending")},
                        first("LRANGE", key("pending"), pending_shown, pending_from),
                        {"ZRANGE", key("workers"), "0", "-1"},
                        {"HGETALL", key("stats")},
                        first("ZREVRANGE", key("ended"), recent_shown),
                        {"SMEMBERS", key("paused")},
                        {"SCARD", key("waiting")},
                        {"SORT", key("waiting"), "LIMIT", "0", std::to_string(pending_shown)}});
    if (!overview) {
        return overview.failure();
    }
    Snapshot snapshot;
    snapshot.pending = (*overview)[0].integer;
    const auto pending_ids = to_strings((*overview)[1]);
    const auto recent_ids = to_strings((*overview)[4]);
    snapshot.stats = (*overview)[3].fields();
    snapshot.waiting = (*overview)[6].integer;
    const auto waiting_ids = to_strings((*overview)[7]);
    for (const auto& gpu : to_strings((*overview)[5])) {
        snapshot.paused.insert(gpu);
    }
    std::vector<std::vector<std::string>> about;
    for (const auto& worker : to_strings((*overview)[2])) {
        snapshot.workers.push_back({worker, {}, {}});
        about.push_back({"HGETALL", key("worker:" + worker)});
        about.push_back({"LRANGE", key("taken:" + worker), "0", "-1"});
    }
    if (!about.empty()) {
        const auto replies = redis.pipeline(about);
        if (!replies) {
            return replies.failure();
        }
        for (std::size_t i = 0; i < snapshot.workers.size(); ++i) {
            snapshot.workers[i].fields = (*replies)[2 * i].fields();
            snapshot.workers[i].taken = to_strings((*replies)[2 * i + 1]);
        }
    }
    // Every job shown, read in one round trip; one gone meanwhile (ended and purged, or
    // expired) is left out.
    std::vector<std::vector<std::string>> reads;
    std::vector<std::string> ids;
    const auto read = [&](const std::string& id) {
        reads.push_back({"HGETALL", key("job:" + id)});
        ids.push_back(id);
    };
    std::for_each(pending_ids.begin(), pending_ids.end(), read);
    for (const auto& worker : snapshot.workers) {
        std::for_each(worker.taken.begin(), worker.taken.end(), read);
    }
    std::for_each(recent_ids.begin(), recent_ids.end(), read);
    std::for_each(waiting_ids.begin(), waiting_ids.end(), read);
    if (reads.empty()) {
        return snapshot;
    }
    const auto replies = redis.pipeline(reads);
    if (!replies) {
        return replies.failure();
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
        auto job = to_job(ids[i], (*replies)[i]);
        if (job.fields.empty()) {
            continue;
        }
        const auto waiting_from = ids.size() - waiting_ids.size();
        if (i < pending_ids.size()) {
            snapshot.first_pending.push_back(std::move(job));
        } else if (i < waiting_from - recent_ids.size()) {
            snapshot.taken_jobs.push_back(std::move(job));
        } else if (i < waiting_from) {
            snapshot.recent.push_back(std::move(job));
        } else {
            snapshot.first_waiting.push_back(std::move(job));
        }
    }
    return snapshot;
}

Result<RedisQueue::Found> RedisQueue::jobs(RedisClient& redis,
                                           const std::vector<std::string>& ids) const
{
    Found found;
    if (ids.empty()) {
        return found;
    }
    std::vector<std::vector<std::string>> reads;
    for (const auto& id : ids) {
        reads.push_back({"HGETALL", key("job:" + id)});
    }
    const auto replies = redis.pipeline(reads);
    if (!replies) {
        return replies.failure();
    }
    bool unended = false;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        auto job = to_job(ids[i], (*replies)[i]);
        if (!job.fields.empty()) {
            unended = unended || job.field("outcome").empty();
            found.jobs.push_back(std::move(job));
        }
    }
    if (unended) {
        const auto pending = redis.command({"LRANGE", key("pending"), "0", "-1"});
        if (!pending) {
            return pending.failure();
        }
        for (auto& id : to_strings(*pending)) {
            found.pending.insert(std::move(id));
        }
    }
    return found;
}

Result<std::vector<QueuedJob>> RedisQueue::job_fields(RedisClient& redis,
                                                      const std::vector<std::string>& ids,
                                                      const std::vector<std::string>& fields) const
{
    std::vector<QueuedJob> found;
    if (ids.empty()) {
        return found;
    }
    std::vector<std::vector<std::string>> reads;
    for (const auto& id : ids) {
        std::vector<std::string> read = {"HMGET", key("job:" + id)};
        read.insert(read.end(), fields.begin(), fields.end());
        reads.push_back(std::move(read));
    }
    const auto replies = redis.pipeline(reads);
    if (!replies) {
        return replies.failure();
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
        QueuedJob job{ids[i], {}};
        const auto& values = (*replies)[i].elements;
        for (std::size_t field = 0; field < fields.size() && field < values.size(); ++field) {
            if (values[field].type == RedisReply::Type::string) {
                job.fields[fields[field]] = values[field].text;
            }
        }
        if (!job.fields.empty()) { // else its hash is gone (purged, expired)
            found.push_back(std::move(job));
        }
    }
    return found;
}

Result<std::set<std::string>> RedisQueue::taken_ids(RedisClient& redis) const
{
    const auto workers = redis.pipeline({{"ZRANGE", key("workers"), "0", "-1"}});
    if (!workers) {
        return workers.failure();
    }
    std::set<std::string> ids;
    std::vector<std::vector<std::string>> lists;
    for (const auto& worker : to_strings(workers->front())) {
        lists.push_back({"LRANGE", key("taken:" + worker), "0", "-1"});
    }
    if (lists.empty()) {
        return ids;
    }
    const auto replies = redis.pipeline(lists);
    if (!replies) {
        return replies.failure();
    }
    for (const auto& reply : *replies) {
        for (auto& id : to_strings(reply)) {
            ids.insert(std::move(id));
        }
    }
    return ids;
}

Result<std::vector<std::string>> RedisQueue::named(RedisClient& redis,
                                                   const std::string& name) const
{
    const auto reply = redis.pipeline({{"SMEMBERS", key("named:" + name)}});
    if (!reply) {
        return reply.failure();
    }
    return to_strings(reply->front());
}

Result<std::vector<std::string>> RedisQueue::unended(RedisClient& redis) const
{
    const auto lists = redis.pipeline({{"LRANGE", key("pending"), "0", "-1"},
                                       {"ZRANGE", key("workers"), "0", "-1"},
                                       {"SMEMBERS", key("waiting")}});
    if (!lists) {
        return lists.failure();
    }
    auto ids = to_strings((*lists)[0]);
    for (auto& id : to_strings((*lists)[2])) {
        ids.push_back(std::move(id));
    }
    std::vector<std::vector<std::string>> taken;
    for (const auto& worker : to_strings((*lists)[1])) {
        taken.push_back({"LRANGE", key("taken:" + worker), "0", "-1"});
    }
    if (!taken.empty()) {
        const auto replies = redis.pipeline(taken);
        if (!replies) {
            return replies.failure();
        }
        for (const auto& reply : *replies) {
            for (auto& id : to_strings(reply)) {
                ids.push_back(std::move(id));
            }
        }
    }
    return ids;
}

Result<RedisQueue::Cancelled> RedisQueue::cancel(RedisClient& redis, const std::string& id) const
{
    const auto known = redis.pipeline(
        {{"HGET", key("job:" + id), "batch"}, {"ZRANGE", key("workers"), "0", "-1"}});
    if (!known) {
        return known.failure();
    }
    std::vector<std::string> keys = {key("job:" + id),
                                     key("pending"),
                                     key("stats"),
                                     key("failures"),
                                     key("batch:" + (*known)[0].text + ":done"),
                                     key("ended"),
                                     key("rank")};
    for (const auto& worker : to_strings((*known)[1])) {
        keys.push_back(key("taken:" + worker));
        keys.push_back(key("cancels:" + worker));
    }
    const auto reply = redis.run(RedisCommand::call(k_cancel, std::move(keys), {id, m_prefix}));
    if (!reply) {
        return reply.failure();
    }
    if (reply->text == "removed") {
        return Cancelled::removed;
    }
    if (reply->text == "stopping") {
        return Cancelled::stopping;
    }
    return reply->text == "ended" ? Cancelled::already_ended : Cancelled::unknown;
}

namespace {

// Why the retry script did not queue job `id` again (its reply, or `forged`), in words.
Failure retry_refused(const std::string& id, const std::string& why, const std::string& queue)
{
    if (why == "unknown") {
        return Failure{FailureKind::not_found, fmt::format("no job {} in {}", id, queue)};
    }
    // A refusal of the retry as asked (a conflict with the job, as the store sees it): the
    // command goes on to its other jobs, the page answers 409.
    if (why == "signed") {
        return Failure{FailureKind::bad_request,
                       fmt::format("job {} is signed, and its next attempt must be too: give the "
                                   "key it was submitted with (--key-file)",
                                   id)};
    }
    if (why == "forged") {
        return Failure{FailureKind::bad_request,
                       fmt::format("job {} does not match its signature under this key (unsigned, "
                                   "or changed in Redis since it was signed): not signed again",
                                   id)};
    }
    if (why == "changed") {
        // Another retry got there first: trying again may succeed.
        return Failure{FailureKind::bad_request,
                       fmt::format("job {} changed while it was queued again; try again", id)};
    }
    if (why.starts_with("skipped:")) {
        return Failure{FailureKind::bad_request,
                       fmt::format("job {} would be skipped again ({}): retry that job first", id,
                                   why.substr(8))};
    }
    if (why == "succeeded") {
        return Failure{
            FailureKind::bad_request,
            fmt::format("job {} succeeded: submit its command again to run it again", id)};
    }
    return Failure{FailureKind::bad_request,
                   fmt::format("job {} is {}: only an ended job can be queued again", id, why)};
}

} // namespace

Result<void> RedisQueue::retry(RedisClient& redis, const std::string& id,
                               const std::optional<std::string>& signing_key) const
{
    const auto queue = fmt::format("queue {} on {}", m_name, describe_redis_url(redis.url()));
    // The next attempt is signed here, where the key is; the script checks that the attempt
    // signed is still the next one.
    const auto read = redis.command({"HMGET", key("job:" + id), "attempt", "command", "context",
                                     "user", "from", "sig"});
    // Redis not answering is said naming it, as the other commands of a queue say it.
    const auto unanswered = [&queue](const Failure& failure) {
        return Failure{failure.kind, fmt::format("{}: {}", queue, failure.message), failure.error};
    };
    if (!read) {
        return unanswered(read.failure());
    }
    const auto field = [&](std::size_t i) {
        return i < read->elements.size() ? read->elements[i].text : std::string();
    };
    const auto attempt = field(0).empty() ? std::string("0") : field(0);
    std::string signature;
    if (signing_key && !field(1).empty()) { // no command: no such job, as the script says
        // Only what was signed is signed again: a record changed in Redis since (its command,
        // its context) would otherwise come out of the retry signed by the key's holder.
        const auto command = field(1);
        const auto context = field(2);
        const auto user = field(3);
        const auto host = field(4);
        if (!signature_matches(*signing_key,
                               SignedJob{m_name, id, attempt, command, context, user, host},
                               field(5))) {
            return retry_refused(id, "forged", queue);
        }
        const auto next = std::to_string(std::strtoll(attempt.c_str(), nullptr, 10) + 1);
        signature =
            sign_job(*signing_key, SignedJob{m_name, id, next, command, context, user, host});
    }
    const auto reply = redis.run(RedisCommand::call(
        k_retry, {key("job:" + id), key("pending"), key("rank"), key("ended"), key("stats")},
        {id, attempt, signature, m_prefix}));
    if (!reply) {
        return unanswered(reply.failure());
    }
    if (!reply->text.empty()) {
        return retry_refused(id, reply->text, queue);
    }
    return {};
}

Result<void> RedisQueue::pause(RedisClient& redis, const std::string& gpu) const
{
    const auto reply = redis.command({"SADD", key("paused"), gpu});
    if (!reply) {
        return reply.failure();
    }
    return {};
}

Result<void> RedisQueue::resume(RedisClient& redis, const std::string& gpu) const
{
    const auto reply = gpu.empty() ? redis.command({"DEL", key("paused")})
                                   : redis.command({"SREM", key("paused"), gpu});
    if (!reply) {
        return reply.failure();
    }
    return {};
}

Result<long long> RedisQueue::purge(RedisClient& redis, std::optional<double> ended_before) const
{
    // In rounds of a few hundred jobs, each one script, so no round holds Redis long.
    constexpr long long k_round = 200;
    const auto before = ended_before ? fmt::format("({:.6f}", *ended_before) : "+inf";
    long long removed = 0;
    std::string after = "-inf";
    while (true) {
        const auto listed = redis.command({"ZRANGEBYSCORE", key("ended"), after, before,
                                           "WITHSCORES", "LIMIT", "0", std::to_string(k_round)});
        if (!listed) {
            return listed.failure();
        }
        if (listed->elements.empty()) {
            return removed;
        }
        std::vector<std::string> ids;
        std::vector<std::vector<std::string>> batches;
        for (std::size_t i = 0; i + 1 < listed->elements.size(); i += 2) {
            ids.push_back(listed->elements[i].text);
            batches.push_back({"HGET", key("job:" + ids.back()), "batch"});
            after = "(" + listed->elements[i + 1].text; // the next round starts after it
        }
        const auto batch_of = redis.pipeline(batches);
        if (!batch_of) {
            return batch_of.failure();
        }
        std::vector<std::string> keys = {key("ended"), key("failures")};
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const auto& batch = (*batch_of)[i].text;
            keys.push_back(key("job:" + ids[i]));
            keys.push_back(key("batch:" + batch + ":done"));
            keys.push_back(key("batch:" + batch + ":seen"));
        }
        const auto reply = redis.run(RedisCommand::call(k_purge, std::move(keys), ids));
        if (!reply) {
            return reply.failure();
        }
        removed += reply->integer;
        if (static_cast<long long>(ids.size()) < k_round) {
            return removed;
        }
    }
}

} // namespace gpusched::queue
