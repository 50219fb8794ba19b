#include "queue_fixture.hpp"

#include <fmt/format.h>

#include <csignal>

namespace gpusched::testing {

using namespace std::chrono_literals;

std::string store_name(const ::testing::TestParamInfo<Store>& info)
{
    return info.param == Store::sqlite ? "Sqlite" : "Redis";
}

QueueFixture::QueueFixture(Store store, Persistence persistence) : m_store(store)
{
    adopt_orphans();
    if (store == Store::redis) {
        m_redis = std::make_unique<RedisServer>(persistence);
    }
}

QueueFixture::~QueueFixture()
{
    stop_workers();
    m_workers.clear();
    if (m_redis) {
        stop_leftovers(m_redis->pid());
    }
}

std::vector<std::string> QueueFixture::where() const
{
    if (m_redis) {
        return {"--redis", m_redis->url()};
    }
    return {"--db", db()};
}

LaunchOptions QueueFixture::command(const std::string& name, std::vector<std::string> args,
                                    std::optional<std::string> stdin_data) const
{
    std::vector<std::string> full = {name};
    const auto queue = where();
    full.insert(full.end(), queue.begin(), queue.end());
    full.insert(full.end(), args.begin(), args.end());
    LaunchOptions options;
    options.args = std::move(full);
    options.stdin_data = std::move(stdin_data);
    return options;
}

Finished QueueFixture::gpusched(const std::string& name, std::vector<std::string> args,
                                std::optional<std::string> stdin_data,
                                std::chrono::milliseconds timeout) const
{
    const TempDir dir; // not m_dir, whose files a submitter may be writing
    return run(dir, command(name, std::move(args), std::move(stdin_data)), timeout);
}

Process& QueueFixture::start_worker(const std::string& gpus, std::vector<std::string> extra,
                                    std::map<std::string, std::optional<std::string>> env)
{
    m_worker_dirs.push_back(std::make_unique<TempDir>());
    const auto& dir = *m_worker_dirs.back();
    std::vector<std::string> args = {"--gpus", gpus};
    args.insert(args.end(), extra.begin(), extra.end());
    auto options = command("worker", args);
    // Whatever a worker keeps by default (a Redis worker's spool and output) stays in its
    // own directory.
    options.env["XDG_STATE_HOME"] = (dir / "state").string();
    options.env["XDG_CACHE_HOME"] = (dir / "cache").string();
    for (auto& [name, value] : env) {
        options.env[name] = std::move(value);
    }
    m_workers.push_back(std::make_unique<Process>(dir, options));
    return *m_workers.back();
}

std::string QueueFixture::worker_err(std::size_t index) const
{
    return read_file(*m_worker_dirs.at(index) / "gpusched.err");
}

void QueueFixture::stop_workers()
{
    for (auto& worker : m_workers) {
        if (!worker->running()) {
            continue;
        }
        worker->signal(SIGTERM);
        EXPECT_FALSE(worker->wait(30s).timed_out) << "a worker did not stop on SIGTERM";
    }
}

LaunchOptions QueueFixture::submit(const std::string& commands,
                                   std::vector<std::string> extra) const
{
    extra.push_back("--no-start");
    return command("submit", std::move(extra), commands);
}

bool QueueFixture::served_only_on(const std::string& gpus) const
{
    const auto listed = gpusched("workers", {"--json"});
    if (listed.exit_status != 0) {
        return false;
    }
    const auto workers = nlohmann::json::parse(listed.out)["workers"];
    if (workers.size() != 1) {
        return false;
    }
    std::string served;
    for (const auto& gpu : workers[0]["gpus"]) {
        served += (served.empty() ? "" : ",") + gpu.get<std::string>();
    }
    return served == gpus;
}

std::optional<nlohmann::json> QueueFixture::try_queue_status() const
{
    const auto result = gpusched("queue", {"--json"}, std::nullopt, 20s);
    if (result.exit_status != 0) {
        return std::nullopt;
    }
    return nlohmann::json::parse(result.out);
}

const nlohmann::json* QueueFixture::listed_job(const nlohmann::json& listing, std::int64_t id)
{
    for (const char* part : {"next", "waiting_jobs", "running", "recent"}) {
        if (!listing.contains(part)) {
            continue;
        }
        for (const auto& job : listing.at(part)) {
            if (job.at("id") == id) {
                return &job;
            }
        }
    }
    return nullptr;
}

nlohmann::json QueueFixture::queue_status() const
{
    const auto result = gpusched("queue", {"--json"}, std::nullopt, 20s);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    return result.exit_status == 0 ? nlohmann::json::parse(result.out) : nlohmann::json::object();
}

std::map<std::string, int> QueueFixture::logged() const
{
    std::map<std::string, int> counts;
    for (const auto& line : split_lines(read_file(m_dir / "log"))) {
        ++counts[line];
    }
    return counts;
}

std::string QueueFixture::logging_commands(int count, const std::string& before) const
{
    std::string commands;
    for (int i = 1; i <= count; ++i) {
        commands += fmt::format("{}echo {} >> {}\n", before, i, log());
    }
    return commands;
}

} // namespace gpusched::testing
