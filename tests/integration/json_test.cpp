// Every `--json` against the one vocabulary written down in docs/json.md, as the JSON Schema
// docs/json-schema.json, checked by a real validator (python3-jsonschema) and read with jq
// as the page shows: on both queue stores, with a lease held and one waited for, a job that
// never ran, one that failed, one a signal ended.
#include "harness.hpp"
#include "queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <regex>
#include <set>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

const fs::path k_schema = GPUSCHED_JSON_SCHEMA;
const fs::path k_json_page = GPUSCHED_JSON_PAGE;
const fs::path k_validator = GPUSCHED_JSON_VALIDATOR;

bool validator_installed()
{
    return std::system("python3 -c 'import jsonschema' > /dev/null 2>&1") == 0;
}

#define REQUIRE_VALIDATOR()                                                                        \
    if (!validator_installed()) {                                                                  \
        GTEST_SKIP()                                                                               \
            << "python3-jsonschema is not installed (apt-get install python3-jsonschema)";         \
    }

// What the validator says is wrong with `document` (each error with where it is); "" when
// the document is valid.
std::string schema_errors(const std::string& document)
{
    TempDir dir;
    LaunchOptions options{
        {"-c", fmt::format("exec python3 '{}' '{}'", k_validator.string(), k_schema.string())},
        document};
    options.program = "/bin/sh";
    const auto checked = run(dir, options);
    if (checked.exit_status == 0) {
        return "";
    }
    return fmt::format("exit {}: {}{}", checked.exit_status, checked.err, document);
}

// `document` filtered by jq's `filter`, as raw lines.
std::vector<std::string> jq(const std::string& filter, const std::string& document)
{
    TempDir dir;
    LaunchOptions options{{"-c", "exec jq -r \"$0\"", filter}, document};
    options.program = "/bin/sh";
    const auto filtered = run(dir, options);
    EXPECT_EQ(filtered.exit_status, 0) << filtered.err;
    return split_lines(filtered.out);
}

bool jq_installed()
{
    return std::system("jq --version > /dev/null 2>&1") == 0;
}

// Seconds are printed to the millisecond: a number with more places is binary noise.
bool has_float_noise(const std::string& document)
{
    return std::regex_search(document, std::regex(R"([0-9]\.[0-9]{4,}[,\n ])"));
}

class JsonVocabulary : public ::testing::TestWithParam<Store>, public QueueFixture {
protected:
    JsonVocabulary() : QueueFixture(GetParam()) {}
    void SetUp() override { adopt_orphans(); }
    void TearDown() override { stop_workers(); }

    // The id of the one job `commands` submits, from `submit --json`, checked on the way.
    std::int64_t submit_one(const std::string& command, std::vector<std::string> extra = {})
    {
        extra.push_back("--json");
        const auto submitted = run(m_dir, submit(command + "\n", std::move(extra)));
        EXPECT_EQ(submitted.exit_status, 0) << submitted.err;
        EXPECT_EQ(schema_errors(submitted.out), "");
        EXPECT_EQ(std::count(submitted.out.begin(), submitted.out.end(), '\n'), 1)
            << "one line, for JSON Lines: " << submitted.out;
        const auto ids = json_field(submitted.out, "ids");
        return ids.is_array() && ids.size() == 1 ? ids[0].get<std::int64_t>() : -1;
    }

    std::string state_of(std::int64_t id) const
    {
        const auto listing = queue_status();
        const auto* job = listed_job(listing, id);
        return job != nullptr ? job->at("state").get<std::string>() : "";
    }
};

TEST_P(JsonVocabulary, QueueWorkersAndSubmitSpeakItOnEitherStore)
{
    REQUIRE_VALIDATOR();
    const auto never_ran = submit_one("echo never");
    ASSERT_EQ(gpusched("cancel", {std::to_string(never_ran)}).exit_status, 0);
    const auto failed = submit_one("exit 3");
    const auto killed = submit_one("kill -KILL $$");
    const auto named = submit_one("true", {"--name", "sweep-a.1"});
    const auto started = m_dir / "started";
    const auto running = submit_one(fmt::format("touch {}; sleep 30", started.string()));
    const auto waiting = submit_one("true", {"--after", std::to_string(running)});
    const auto queued = submit_one("true"); // behind the running job, on the worker's one GPU

    // Before any worker: queued jobs have no start, no GPU, no outcome.
    const auto before = gpusched("queue", {"--json"});
    ASSERT_EQ(before.exit_status, 0) << before.err;
    EXPECT_EQ(schema_errors(before.out), "");

    auto& worker = start_worker("0");
    ASSERT_TRUE(eventually([&] { return fs::exists(started) && state_of(named) == "succeeded"; }))
        << worker_err(0);
    ASSERT_TRUE(eventually([&] { return state_of(killed) == "failed"; })) << worker_err(0);
    // A job's start is recorded once it has started (a moment after it was taken).
    ASSERT_TRUE(eventually([&] {
        const auto running_jobs = queue_status()["running"];
        return running_jobs.size() == 1 && running_jobs[0]["started"].is_number();
    })) << worker_err(0);

    const auto listed = gpusched("queue", {"--json", "--next", "100", "--failures", "100"});
    ASSERT_EQ(listed.exit_status, 0) << listed.err;
    EXPECT_EQ(schema_errors(listed.out), "");
    EXPECT_FALSE(has_float_noise(listed.out)) << listed.out;
    const auto listing = nlohmann::json::parse(listed.out);
    EXPECT_EQ(listing["schema_version"], 3);
    EXPECT_EQ(listing["command"], "queue");

    // A job cancelled before it ran: nothing of a run, where 0 would read as a success.
    const auto* cancelled = listed_job(listing, never_ran);
    ASSERT_NE(cancelled, nullptr) << listing.dump(2);
    EXPECT_EQ((*cancelled)["state"], "cancelled");
    for (const char* field : {"started", "runtime_seconds", "exit_code", "signal", "worker"}) {
        EXPECT_EQ((*cancelled)[field], nullptr) << field << ": " << cancelled->dump();
    }
    EXPECT_EQ((*cancelled)["gpus"], nlohmann::json::array());

    const auto* exited = listed_job(listing, failed);
    ASSERT_NE(exited, nullptr);
    EXPECT_EQ((*exited)["exit_code"], 3);
    EXPECT_EQ((*exited)["signal"], nullptr);
    EXPECT_EQ((*exited)["gpus"], nlohmann::json::array({"0"}));
    EXPECT_TRUE((*exited)["runtime_seconds"].is_number());

    const auto* signalled = listed_job(listing, killed);
    ASSERT_NE(signalled, nullptr);
    EXPECT_EQ((*signalled)["exit_code"], nullptr) << "a signal ended it: no exit status";
    EXPECT_EQ((*signalled)["signal"], "SIGKILL");

    EXPECT_EQ(listed_job(listing, named)->at("name"), "sweep-a.1");
    ASSERT_EQ(listing["running"].size(), 1u) << listing.dump(2);
    EXPECT_EQ(listing["running"][0]["id"], running);
    EXPECT_EQ(listing["running"][0]["ended"], nullptr);
    EXPECT_TRUE(listing["running"][0]["started"].is_number());
    ASSERT_EQ(listing["waiting_jobs"].size(), 1u);
    EXPECT_EQ(listing["waiting_jobs"][0]["id"], waiting);
    EXPECT_EQ(listing["waiting_jobs"][0]["after"], nlohmann::json::array({running}));
    ASSERT_EQ(listing["next"].size(), 1u) << listing.dump(2);
    EXPECT_EQ(listing["next"][0]["id"], queued);
    EXPECT_EQ(listing["next"][0]["position"], 1);

    // The worker: HOST:PID:RANDOM on both stores, its GPUs an array, its running jobs counted.
    const auto workers = gpusched("workers", {"--json"});
    ASSERT_EQ(workers.exit_status, 0) << workers.err;
    EXPECT_EQ(schema_errors(workers.out), "");
    const auto listed_workers = json_field(workers.out, "workers");
    ASSERT_EQ(listed_workers.size(), 1u) << workers.out;
    const auto& serving = listed_workers[0];
    const std::string host = serving["host"];
    EXPECT_TRUE(
        std::regex_match(serving["id"].get<std::string>(),
                         std::regex(host + ":" + std::to_string(worker.pid()) + ":[0-9a-f]+")))
        << serving;
    EXPECT_EQ(serving["gpus"], nlohmann::json::array({"0"}));
    EXPECT_EQ(serving["running"], 1);
    EXPECT_EQ(listing["workers"][0], serving) << "the same worker in `queue` and `workers`";

    if (jq_installed()) {
        // docs/json.md's first example: the ended jobs that did not succeed.
        const auto not_succeeded =
            jq(R"jq(.recent[] | select(.exit_code != 0) | "\(.id) \(.command)")jq", listed.out);
        EXPECT_EQ(std::set<std::string>(not_succeeded.begin(), not_succeeded.end()),
                  (std::set<std::string>{fmt::format("{} echo never", never_ran),
                                         fmt::format("{} exit 3", failed),
                                         fmt::format("{} kill -KILL $$", killed)}));
    }
}

INSTANTIATE_TEST_SUITE_P(Stores, JsonVocabulary, ::testing::Values(Store::sqlite, Store::redis),
                         store_name);

TEST(JsonVocabularyOfRuns, ReportSpeaksIt)
{
    REQUIRE_VALIDATOR();
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto ran = run(dir, {{"--gpus", "0,1", "--retries", "1", "--timeout", "1", "--joblog",
                                joblog.string(), "-q"},
                               "true\nexit 3\nkill -TERM $$\nsleep 30\n"});
    ASSERT_NE(ran.exit_status, 0) << ran.err;
    const auto report = run(dir, {{"report", joblog.string(), "--json"}});
    ASSERT_EQ(report.exit_status, 0) << report.err;
    EXPECT_EQ(schema_errors(report.out), "");
    EXPECT_FALSE(has_float_noise(std::regex_replace(
        report.out, std::regex(R"("busy_share": [0-9.]+)"), R"("busy_share": 0)")))
        << report.out;
    const auto failed = json_field(report.out, "failed_jobs");
    ASSERT_EQ(failed.size(), 3u) << report.out;
    EXPECT_EQ(failed[0]["last_attempt"]["exit_code"], 3);
    EXPECT_EQ(failed[1]["last_attempt"]["signal"], "SIGTERM");
    EXPECT_EQ(failed[1]["last_attempt"]["exit_code"], nullptr);
    EXPECT_EQ(failed[2]["last_attempt"]["stopped"], "timeout");
    if (jq_installed()) {
        EXPECT_EQ(jq(".failed_jobs[].id", report.out), (std::vector<std::string>{"2", "3", "4"}));
    }
}

// `status` with a GPU leased by a run and a process waiting for it, and `gpus`.
TEST(JsonVocabularyOfRuns, StatusAndGpusSpeakIt)
{
    REQUIRE_VALIDATOR();
    adopt_orphans();
    TempDir dir;
    const auto locks = (dir / "leases").string();
    const std::map<std::string, std::optional<std::string>> shared{{"GPUSCHED_LOCK_DIR", locks}};
    const auto started = dir / "started";
    Process holder(dir, {{"--gpus", "0"},
                         fmt::format("touch {}; sleep 30\n", started.string()),
                         std::nullopt,
                         shared});
    ASSERT_TRUE(eventually([&] { return fs::exists(started); })) << holder.err_so_far();
    TempDir other;
    Process waiter(other,
                   {{"exec", "--gpus", "0", "--", "true"}, std::nullopt, std::nullopt, shared});
    const auto waiters = [&] {
        const auto status =
            run(dir, {{"status", "--gpus", "0,1", "--json"}, std::nullopt, std::nullopt, shared});
        return json_field(status.out, "waiters");
    };
    ASSERT_TRUE(eventually([&] { return waiters().size() == 1; })) << waiter.err_so_far();

    const auto status =
        run(dir, {{"status", "--gpus", "0,1", "--json"}, std::nullopt, std::nullopt, shared});
    ASSERT_EQ(status.exit_status, 0) << status.err;
    EXPECT_EQ(schema_errors(status.out), "");
    EXPECT_FALSE(has_float_noise(status.out)) << status.out;
    const auto gpus = json_field(status.out, "gpus");
    ASSERT_EQ(gpus.size(), 2u) << status.out;
    EXPECT_EQ(gpus[0]["id"], "0");
    EXPECT_EQ(gpus[0]["holder"]["pid"], holder.pid());
    EXPECT_EQ(gpus[0]["record"]["check"], "matches");
    ASSERT_EQ(gpus[0]["record"]["jobs"].size(), 1u);
    EXPECT_TRUE(gpus[0]["record"]["jobs"][0]["started"].is_number());
    EXPECT_EQ(gpus[1]["holder"], nullptr);
    EXPECT_EQ(gpus[1]["record"], nullptr);
    const auto waiting = json_field(status.out, "waiters");
    ASSERT_EQ(waiting.size(), 1u);
    EXPECT_EQ(waiting[0]["pid"], waiter.pid());
    EXPECT_EQ(waiting[0]["gpu_count"], 1);
    EXPECT_EQ(waiting[0]["uid"], getuid());
    EXPECT_TRUE(waiting[0]["since"].is_number());

    holder.signal(SIGTERM);
    holder.wait();
    EXPECT_EQ(waiter.wait().exit_status, 0);

    const auto listed = run(dir, {{"gpus", "--gpus", "0,1", "--json"}});
    ASSERT_EQ(listed.exit_status, 0) << listed.err;
    EXPECT_EQ(schema_errors(listed.out), "");
    EXPECT_EQ(json_field(listed.out, "gpus").size(), 2u);
}

// Every field the schema defines is explained on the page, so the two cannot drift apart
// unseen; and the validator refuses what breaks the vocabulary (it is no rubber stamp).
TEST(JsonVocabularyOfRuns, ThePageNamesEveryFieldAndTheSchemaRefusesOtherShapes)
{
    REQUIRE_VALIDATOR();
    const auto page = read_file(k_json_page);
    const auto schema = nlohmann::json::parse(read_file(k_schema));
    std::set<std::string> fields;
    const std::function<void(const nlohmann::json&)> collect = [&](const nlohmann::json& node) {
        if (node.is_object()) {
            if (node.contains("properties") && node["properties"].is_object()) {
                for (const auto& [name, _] : node["properties"].items()) {
                    fields.insert(name);
                }
            }
            for (const auto& [_, child] : node.items()) {
                collect(child);
            }
        } else if (node.is_array()) {
            for (const auto& child : node) {
                collect(child);
            }
        }
    };
    collect(schema);
    EXPECT_GT(fields.size(), 60u);
    for (const auto& field : fields) {
        EXPECT_NE(page.find(field), std::string::npos) << field << " is not on docs/json.md";
    }

    EXPECT_NE(schema_errors(R"({"schema_version": 3, "command": "submit", "queue": "q",
                                "ids": ["1"]})"),
              "");
    EXPECT_NE(schema_errors(R"({"schema_version": 2, "command": "submit", "queue": "q",
                                "ids": [1]})"),
              "");
    EXPECT_NE(schema_errors(R"({"schema_version": 3, "command": "workers", "queue": "q",
                                "where": "w", "workers": [{"id": "vm-1-ab", "host": "vm",
                                "pid": 1, "user": null, "gpus": "0,1", "since": 1.5,
                                "running": 0}]})"),
              "");
    EXPECT_EQ(schema_errors(R"({"schema_version": 3, "command": "submit", "queue": "q",
                                "ids": [1, 2]})"),
              "");
}

} // namespace
} // namespace gpusched::testing
