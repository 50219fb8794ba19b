#pragma once

#include "harness.hpp"
#include "redis_server.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::testing {

// Where a test's queue is kept.
enum class Store { sqlite, redis };

// "Sqlite" or "Redis", for the names of parameterised tests.
std::string store_name(const ::testing::TestParamInfo<Store>& info);

// A queue on one store, with its workers, submitters and listings as real processes: what
// every queue test shares. Workers are stopped one way, with SIGTERM, at the end.
//
// Used as a second base of a test fixture:
//   class Queue : public ::testing::TestWithParam<Store>, public QueueFixture {
//   protected:
//       Queue() : QueueFixture(GetParam()) {}
//   };
class QueueFixture {
public:
    explicit QueueFixture(Store store, Persistence persistence = Persistence::none);
    virtual ~QueueFixture();
    QueueFixture(const QueueFixture&) = delete;
    QueueFixture& operator=(const QueueFixture&) = delete;

    Store store() const { return m_store; }
    bool on_redis() const { return m_store == Store::redis; }
    RedisServer& redis() { return *m_redis; }
    const RedisServer& redis() const { return *m_redis; }
    // The local queue's database (on SQLite).
    std::string db() const { return (m_dir / "queue.db").string(); }
    // The options that name the queue, whichever store keeps it.
    std::vector<std::string> where() const;

    // `gpusched NAME --db|--redis ... ARGS`.
    LaunchOptions command(const std::string& name, std::vector<std::string> args = {},
                          std::optional<std::string> stdin_data = std::nullopt) const;
    Finished gpusched(const std::string& name, std::vector<std::string> args = {},
                      std::optional<std::string> stdin_data = std::nullopt,
                      std::chrono::milliseconds timeout = std::chrono::seconds(60)) const;

    // A worker on GPUs `gpus`, in a directory of its own (its stdout, stderr, and whatever
    // it keeps under XDG_STATE_HOME and XDG_CACHE_HOME, which `env` may change).
    Process& start_worker(const std::string& gpus, std::vector<std::string> extra = {},
                          std::map<std::string, std::optional<std::string>> env = {});
    // What worker `index` (in the order started) wrote on stderr.
    std::string worker_err(std::size_t index) const;
    // SIGTERM to every worker still running (its running jobs go back to the queue), and
    // each waited for.
    void stop_workers();

    // A submission of `commands` (never starting a worker by itself).
    LaunchOptions submit(const std::string& commands, std::vector<std::string> extra = {}) const;

    // `queue --json`, which must succeed; or nothing when it fails (a server away).
    nlohmann::json queue_status() const;
    std::optional<nlohmann::json> try_queue_status() const;
    // Job `id` of a `queue --json` listing, wherever it is listed (next, waiting, running or
    // recent); nothing when it is not listed.
    static const nlohmann::json* listed_job(const nlohmann::json& listing, std::int64_t id);
    // True when `gpusched workers` lists one worker, which serves on `gpus` ("0,1").
    bool served_only_on(const std::string& gpus) const;

    // The log jobs write to, and its lines counted.
    std::string log() const { return (m_dir / "log").string(); }
    std::map<std::string, int> logged() const;
    // Commands that each append their number to the log, `count` of them.
    std::string logging_commands(int count, const std::string& before = "") const;

protected:
    Store m_store;
    std::unique_ptr<RedisServer> m_redis;
    TempDir m_dir;
    std::vector<std::unique_ptr<TempDir>> m_worker_dirs;
    std::vector<std::unique_ptr<Process>> m_workers;
};

} // namespace gpusched::testing
