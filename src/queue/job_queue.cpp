#include <gpusched/queue/job_queue.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <random>

namespace gpusched::queue {
namespace {

// Redis runs each script atomically. TIME is the server's clock, the one clock every worker
// shares, so heartbeats compare across hosts whatever their own clocks say.
constexpr const char* k_submit = R"lua(
if redis.call('HSETNX', KEYS[1], 'command', ARGV[2]) == 0 then return 0 end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'batch', ARGV[3], 'seq', ARGV[4], 'sig', ARGV[5],
           'submitted', t[1] .. '.' .. string.format('%06d', t[2]))
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[3], 'submitted', 1)
return 1
)lua";

constexpr const char* k_move_all = R"lua(
local moved = {}
while true do
  local id = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not id then break end
  moved[#moved + 1] = id
end
redis.call('EXPIRE', KEYS[2], 604800)
return moved
)lua";

constexpr const char* k_finish = R"lua(
redis.call('LREM', KEYS[2], 0, ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[1], 'outcome') == 1 then return 0 end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'outcome', ARGV[2], 'exit', ARGV[3], 'signal', ARGV[4],
           'host', ARGV[5], 'gpu', ARGV[6], 'started', ARGV[7], 'runtime', ARGV[8],
           'note', ARGV[9], 'ended', t[1] .. '.' .. string.format('%06d', t[2]))
redis.call('HINCRBY', KEYS[3], ARGV[2], 1)
if ARGV[2] ~= 'succeeded' then
  redis.call('RPUSH', KEYS[4], ARGV[1])
  redis.call('LTRIM', KEYS[4], -1000, -1)
end
local batch = redis.call('HGET', KEYS[1], 'batch')
if batch then
  local done = ARGV[10] .. 'batch:' .. batch .. ':done'
  redis.call('RPUSH', done, ARGV[1])
  redis.call('EXPIRE', done, 604800)
end
return 1
)lua";

constexpr const char* k_give_back = R"lua(
if redis.call('LREM', KEYS[1], 0, ARGV[1]) == 0 then return 0 end
if redis.call('HEXISTS', KEYS[3], 'outcome') == 1 then return 0 end
redis.call('HDEL', KEYS[3], 'worker', 'host', 'gpu', 'started')
redis.call('LPUSH', KEYS[2], ARGV[1])
return 1
)lua";

constexpr const char* k_heartbeat = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('HSET', ARGV[4] .. 'worker:' .. ARGV[1], 'about', ARGV[2])
local returned = 0
for _, worker in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))) do
  local taken = ARGV[4] .. 'taken:' .. worker
  while true do
    local id = redis.call('RPOP', taken)
    if not id then break end
    local job = ARGV[4] .. 'job:' .. id
    if redis.call('HEXISTS', job, 'outcome') == 0 then
      redis.call('HDEL', job, 'worker', 'host', 'gpu', 'started')
      redis.call('HINCRBY', job, 'returned', 1)
      redis.call('LPUSH', KEYS[2], id)
      returned = returned + 1
    end
  end
  redis.call('ZREM', KEYS[1], worker)
  redis.call('DEL', ARGV[4] .. 'worker:' .. worker)
end
return returned
)lua";

std::vector<std::string> eval(const char* script, std::vector<std::string> keys,
                              std::vector<std::string> args)
{
    std::vector<std::string> command = {"EVAL", script, std::to_string(keys.size())};
    command.insert(command.end(), keys.begin(), keys.end());
    command.insert(command.end(), args.begin(), args.end());
    return command;
}

bool ok(const std::optional<RedisReply>& reply)
{
    return reply && !reply->is_error();
}

std::map<std::string, std::string> to_map(const RedisReply& reply)
{
    std::map<std::string, std::string> fields;
    for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
        fields[reply.elements[i].text] = reply.elements[i + 1].text;
    }
    return fields;
}

long long number_field(const std::map<std::string, std::string>& fields, const std::string& name)
{
    const auto found = fields.find(name);
    return found == fields.end() ? 0 : std::atoll(found->second.c_str());
}

std::optional<std::vector<std::string>> whole_list(RedisClient& redis, const std::string& list)
{
    const auto reply = redis.command({"LRANGE", list, "0", "-1"});
    if (!ok(reply)) {
        return std::nullopt;
    }
    std::vector<std::string> items;
    for (const auto& item : reply->elements) {
        items.push_back(item.text);
    }
    return items;
}

} // namespace

const std::string& QueuedJob::field(const std::string& name) const
{
    static const std::string k_none;
    const auto found = fields.find(name);
    return found == fields.end() ? k_none : found->second;
}

std::optional<std::string> check_queue_name(const std::string& name)
{
    const bool valid = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.';
    });
    if (valid) {
        return std::nullopt;
    }
    return fmt::format("--queue '{}': a name of letters, digits, '-', '_' and '.'", name);
}

JobQueue::JobQueue(std::string name) : m_name(std::move(name)), m_prefix("gpusched:" + m_name + ":")
{
}

std::optional<std::string> JobQueue::open(RedisClient& redis) const
{
    std::random_device random;
    const auto made = fmt::format("{:08x}{:08x}", random(), random());
    const auto replies =
        redis.pipeline({{"SET", key("marker"), made, "NX"}, {"GET", key("marker")}});
    if (!replies || (*replies)[1].type != RedisReply::Type::string) {
        return std::nullopt;
    }
    return (*replies)[1].text;
}

std::optional<std::string> JobQueue::marker(RedisClient& redis) const
{
    const auto reply = redis.command({"GET", key("marker")});
    if (!ok(reply)) {
        return std::nullopt;
    }
    return reply->type == RedisReply::Type::string ? reply->text : std::string();
}

std::optional<long long> JobQueue::reserve_ids(RedisClient& redis, long long count) const
{
    const auto reply = redis.command({"INCRBY", key("next_id"), std::to_string(count)});
    return ok(reply) ? std::optional<long long>(reply->integer) : std::nullopt;
}

std::optional<long long> JobQueue::new_batch(RedisClient& redis) const
{
    const auto reply = redis.command({"INCR", key("next_batch")});
    return ok(reply) ? std::optional<long long>(reply->integer) : std::nullopt;
}

bool JobQueue::submit(RedisClient& redis, const std::string& batch,
                      const std::vector<NewJob>& jobs) const
{
    std::vector<std::vector<std::string>> commands;
    for (const auto& job : jobs) {
        commands.push_back(eval(k_submit, {key("job:" + job.id), key("pending"), key("stats")},
                                {job.id, job.command, batch, job.seq, job.signature}));
    }
    const auto replies = redis.pipeline(commands);
    return replies && std::none_of(replies->begin(), replies->end(),
                                   [](const RedisReply& reply) { return reply.is_error(); });
}

std::optional<std::vector<std::string>>
JobQueue::wait_ended(RedisClient& redis, const std::string& batch, double timeout_s) const
{
    // Ids move from done to seen, so one whose reply is lost with the connection is still
    // found by ended_ids() afterwards.
    const auto done = key("batch:" + batch + ":done");
    const auto seen = key("batch:" + batch + ":seen");
    const auto first =
        redis.command({"BLMOVE", done, seen, "LEFT", "RIGHT", fmt::format("{}", timeout_s)});
    if (!ok(first)) {
        return std::nullopt;
    }
    std::vector<std::string> ids;
    if (first->type != RedisReply::Type::string) {
        return ids; // timed out
    }
    ids.push_back(first->text);
    const auto rest = redis.command(eval(k_move_all, {done, seen}, {}));
    if (!ok(rest)) {
        return std::nullopt;
    }
    for (const auto& id : rest->elements) {
        ids.push_back(id.text);
    }
    return ids;
}

std::optional<std::vector<std::string>> JobQueue::ended_ids(RedisClient& redis,
                                                            const std::string& batch) const
{
    return whole_list(redis, key("batch:" + batch + ":seen"));
}

bool JobQueue::send_take(RedisClient& take, const std::string& worker) const
{
    return take.send({"BLMOVE", key("pending"), key("taken:" + worker), "LEFT", "RIGHT", "0"});
}

std::optional<QueuedJob> JobQueue::fetch(RedisClient& redis, const std::string& id) const
{
    const auto reply = redis.command({"HGETALL", key("job:" + id)});
    if (!ok(reply)) {
        return std::nullopt;
    }
    return QueuedJob{id, to_map(*reply)};
}

bool JobQueue::mark_started(RedisClient& redis, const std::string& id, const std::string& worker,
                            const std::string& host, const std::string& gpu, double started) const
{
    return ok(redis.command({"HSET", key("job:" + id), "worker", worker, "host", host, "gpu", gpu,
                             "started", fmt::format("{:.6f}", started)}));
}

bool JobQueue::finish(RedisClient& redis, const std::string& worker, const JobResult& result) const
{
    return ok(redis.command(eval(
        k_finish, {key("job:" + result.id), key("taken:" + worker), key("stats"), key("failures")},
        {result.id, result.outcome, std::to_string(result.exit_code), std::to_string(result.signal),
         result.host, result.gpu, fmt::format("{:.6f}", result.started),
         fmt::format("{:.6f}", result.runtime), result.note, m_prefix})));
}

bool JobQueue::give_back(RedisClient& redis, const std::string& worker, const std::string& id) const
{
    return ok(redis.command(
        eval(k_give_back, {key("taken:" + worker), key("pending"), key("job:" + id)}, {id})));
}

std::optional<long long> JobQueue::heartbeat(RedisClient& redis, const std::string& worker,
                                             const std::string& description,
                                             long long lease_timeout_ms) const
{
    const auto reply =
        redis.command(eval(k_heartbeat, {key("workers"), key("pending")},
                           {worker, description, std::to_string(lease_timeout_ms), m_prefix}));
    return ok(reply) ? std::optional<long long>(reply->integer) : std::nullopt;
}

std::optional<std::vector<std::string>> JobQueue::taken_by(RedisClient& redis,
                                                           const std::string& worker) const
{
    return whole_list(redis, key("taken:" + worker));
}

bool JobQueue::forget_worker(RedisClient& redis, const std::string& worker) const
{
    return redis.pipeline({{"ZREM", key("workers"), worker}, {"DEL", key("worker:" + worker)}})
        .has_value();
}

std::optional<QueueStatus> JobQueue::status(RedisClient& redis, std::size_t failures) const
{
    const auto overview = redis.pipeline(
        {{"LLEN", key("pending")},
         {"ZRANGE", key("workers"), "0", "-1"},
         {"HGETALL", key("stats")},
         {"LRANGE", key("failures"), std::to_string(-static_cast<long long>(failures)), "-1"}});
    if (!overview) {
        return std::nullopt;
    }
    QueueStatus status;
    status.pending = (*overview)[0].integer;
    const auto stats = to_map((*overview)[2]);
    status.submitted = number_field(stats, "submitted");
    status.succeeded = number_field(stats, "succeeded");
    status.failed = number_field(stats, "failed");
    status.refused = number_field(stats, "refused");
    for (const auto& worker : (*overview)[1].elements) {
        const auto ids = taken_by(redis, worker.text);
        for (const auto& id : ids.value_or(std::vector<std::string>{})) {
            const auto job = fetch(redis, id);
            if (job) {
                status.running.push_back({id, worker.text, job->field("host"), job->field("gpu"),
                                          job->field("started"), job->field("command")});
            }
        }
    }
    for (const auto& id : (*overview)[3].elements) {
        if (auto job = fetch(redis, id.text)) {
            status.failures.push_back(std::move(*job));
        }
    }
    return status;
}

} // namespace gpusched::queue
