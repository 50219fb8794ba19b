// The routes of `gpusched serve` as functions: a request's parts in, an answer out, against a
// real SQLite queue in a temporary directory and a clock of the test's own. What needs a
// browser (the page's script, the live stream) is tests/browser/'s.
#include <gpusched/queue/sqlite/sqlite_queue.hpp>
#include <gpusched/queue/sqlite/sqlite_queue_backend.hpp>
#include <gpusched/web/web_handlers.hpp>

#include <fmt/format.h>
#include "temp_directory.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

namespace gpusched::web {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A clock that shows what the test sets.
class FixedTime final : public TimeSource {
public:
    std::chrono::steady_clock::time_point now() const override { return m_now; }
    std::chrono::system_clock::time_point wall_now() const override { return m_wall_now; }

    std::chrono::steady_clock::time_point m_now{1000s};
    std::chrono::system_clock::time_point m_wall_now{1'700'000'000s};
};

constexpr unsigned k_alice = 1000;
constexpr unsigned k_bob = 1001;

Json body_of(const WebAnswer& answer)
{
    return Json::parse(answer.body);
}

class WebHandlersTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        m_dir = testing::make_temp_directory("gpusched-web");
        m_database.emplace(m_dir / "queue.db", 1s);
        queue::prepare_sqlite_queue_schema(*m_database);
        m_queue.emplace(*m_database, "default");
        LiveSources sources;
        sources.open_queue = [path = m_dir / "queue.db"](queue::WhenMissing missing) {
            return std::make_unique<queue::SqliteQueueBackend>(path, "default", missing);
        };
        sources.queue_name = "default";
        sources.host = "here";
        sources.user = "alice";
        sources.uid = k_alice;
        m_state = std::make_unique<LiveState>(std::move(sources));
        m_handlers = std::make_unique<WebHandlers>(*m_state, m_time);
    }
    void TearDown() override
    {
        m_handlers.reset();
        m_state.reset();
        m_queue.reset();
        m_database.reset();
        fs::remove_all(m_dir);
    }

    // A job submitted by `user` (uid `uid`), labelled `name`; its id.
    std::int64_t submit(const std::string& command, const std::string& name = "",
                        const std::string& user = "alice", unsigned uid = k_alice)
    {
        queue::BatchOrigin origin;
        origin.context.directory = m_dir.string();
        origin.submitter.uid = uid;
        origin.submitter.user = user;
        origin.name = name;
        queue::SubmitOrder order;
        order.origin = &origin;
        return m_queue->submit({{command}}, order).ids.front();
    }

    fs::path m_dir;
    std::optional<queue::Database> m_database;
    std::optional<queue::SqliteQueue> m_queue;
    FixedTime m_time;
    std::unique_ptr<LiveState> m_state;
    std::unique_ptr<WebHandlers> m_handlers;
};

TEST_F(WebHandlersTest, AJobIsAnsweredWithItsRecordAndAnUnknownOneIsNotFound)
{
    const auto id = submit("python train.py", "train-a");

    const auto found = m_handlers->job({.captured = {std::to_string(id)}});
    EXPECT_EQ(found.status, 200);
    EXPECT_EQ(found.content_type, "application/json");
    EXPECT_EQ(body_of(found)["job"]["id"], id);
    EXPECT_EQ(body_of(found)["job"]["command"], "python train.py");
    EXPECT_EQ(body_of(found)["output"]["stdout_bytes"], 0);

    const auto missing = m_handlers->job({.captured = {"99"}});
    EXPECT_EQ(missing.status, 404);
    EXPECT_EQ(body_of(missing)["error"], "no job 99 in this queue");
}

TEST_F(WebHandlersTest, AQueuePageIsReadFromTheStoreAndABadWindowIsRefused)
{
    submit("a");
    submit("b");
    submit("c");

    const auto page = m_handlers->queue({.query = {{"from", "1"}, {"count", "1"}}});
    EXPECT_EQ(page.status, 200);
    const auto listed = body_of(page);
    EXPECT_TRUE(listed["error"].is_null());
    EXPECT_EQ(listed["queued"], 3);
    ASSERT_EQ(listed["next"].size(), 1U);
    EXPECT_EQ(listed["next"][0]["command"], "b");
    EXPECT_EQ(listed["next"][0]["position"], 2);

    for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
             {"count", "501"}, {"count", "x"}, {"from", "-1"}}) {
        SCOPED_TRACE(name + "=" + value);
        const auto refused = m_handlers->queue({.query = {{name, value}}});
        EXPECT_EQ(refused.status, 400);
        EXPECT_EQ(body_of(refused)["error"], "from and count are whole numbers, count at most 500");
    }
}

TEST_F(WebHandlersTest, TheTimelineEndsAtTheInjectedTimeAndSpansTheHoursAsked)
{
    const auto answer = m_handlers->timeline({.query = {{"hours", "2"}}});
    EXPECT_EQ(answer.status, 200);
    const auto timeline = body_of(answer);
    EXPECT_EQ(timeline["to"], json_instant(1'700'000'000));
    EXPECT_EQ(timeline["from"], json_instant(1'700'000'000 - 2 * 3600));

    for (const auto* hours : {"0", "25", "x", ""}) {
        SCOPED_TRACE(hours);
        const auto refused = m_handlers->timeline({.query = {{"hours", hours}}});
        EXPECT_EQ(refused.status, 400);
        EXPECT_EQ(body_of(refused)["error"], "hours is a whole number from 1 to 24");
    }
}

TEST_F(WebHandlersTest, AJobsOutputIsItsTailOrFromAnOffsetAndABadStreamIsRefused)
{
    const auto id = submit("echo hello");
    const auto output = m_dir / "output";
    fs::create_directory(output);
    ASSERT_TRUE(m_queue->take("w1", output.string()));
    std::ofstream(output / fmt::format("{}.out", id)) << "hello\nworld\n";
    const auto job = std::to_string(id);

    const auto tail = m_handlers->job_output({.captured = {job}, .query = {{"stream", "stdout"}}});
    EXPECT_EQ(tail.status, 200);
    EXPECT_EQ(body_of(tail)["text"], "hello\nworld\n");
    EXPECT_EQ(body_of(tail)["from"], 0);
    EXPECT_EQ(body_of(tail)["next"], 12);

    const auto rest =
        m_handlers->job_output({.captured = {job}, .query = {{"stream", "stdout"}, {"from", "6"}}});
    EXPECT_EQ(body_of(rest)["text"], "world\n");
    EXPECT_EQ(body_of(rest)["next"], 12);

    const auto err = m_handlers->job_output({.captured = {job}, .query = {{"stream", "stderr"}}});
    EXPECT_EQ(err.status, 200);
    EXPECT_EQ(body_of(err)["text"], "");

    const auto bad_stream =
        m_handlers->job_output({.captured = {job}, .query = {{"stream", "foo"}}});
    EXPECT_EQ(bad_stream.status, 400);
    EXPECT_EQ(body_of(bad_stream)["error"], "stream is stdout or stderr");
    EXPECT_EQ(m_handlers->job_output({.captured = {job}}).status, 400);

    const auto bad_from =
        m_handlers->job_output({.captured = {job}, .query = {{"stream", "stdout"}, {"from", "x"}}});
    EXPECT_EQ(bad_from.status, 400);
    EXPECT_EQ(body_of(bad_from)["error"], "from is a byte offset");

    const auto missing =
        m_handlers->job_output({.captured = {"99"}, .query = {{"stream", "stdout"}}});
    EXPECT_EQ(missing.status, 404);
    EXPECT_EQ(body_of(missing)["error"], "no job 99 in this queue");
}

// Decided by the failure's kind: the words of a message change, and are for people.
TEST(WebStatusFor, TheStatusFollowsTheFailuresKindNotItsWords)
{
    EXPECT_EQ(status_for(Failure(FailureKind::not_found, "no job 7 in this queue")), 404);
    EXPECT_EQ(status_for(Failure(FailureKind::bad_request, "from is a byte offset")), 400);
    EXPECT_EQ(status_for(Failure(FailureKind::bad_request, "job 3 is running"), 409), 409);
    EXPECT_EQ(status_for(Failure(FailureKind::refused, "no job here for you")), 403);
    EXPECT_EQ(status_for(Failure(FailureKind::unreachable, "redis: connection refused")), 503);
    EXPECT_EQ(status_for(Failure("no job, but of no known kind")), 500);
}

// The page's script titles a job's page "job ID · LABEL · gpusched" from the job in the
// page's data block: the first paint has what the title is made of.
TEST_F(WebHandlersTest, AJobsPageHoldsWhatItsTitleIsMadeOf)
{
    const auto id = submit("python train.py", "train-a");

    const auto page = m_handlers->page(true, std::to_string(id));
    EXPECT_EQ(page.status, 200);
    EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
    EXPECT_NE(page.body.find("<title>gpusched</title>"), std::string::npos);
    const std::string block = R"(<script type="application/json" id="initial-state">)";
    const auto begin = page.body.find(block);
    ASSERT_NE(begin, std::string::npos) << page.body;
    const auto end = page.body.find("</script>", begin);
    const auto state =
        Json::parse(page.body.substr(begin + block.size(), end - begin - block.size()));
    EXPECT_EQ(state["job"]["job"]["id"], id);
    EXPECT_EQ(state["job"]["job"]["name"], "train-a");
    EXPECT_EQ(state["job"]["job"]["command"], "python train.py");
    const auto has_header = [&](const WebAnswer& answer, const std::string& name) {
        for (const auto& [header, value] : answer.headers) {
            if (header == name) {
                return true;
            }
        }
        return false;
    };
    EXPECT_TRUE(has_header(page, "Content-Security-Policy"));
    EXPECT_TRUE(has_header(page, "Cache-Control"));

    // Where the request may not read the data, the page holds none.
    const auto bare = m_handlers->page(false, std::to_string(id));
    EXPECT_EQ(bare.body.find(block), std::string::npos);
    EXPECT_EQ(bare.body.find("train-a"), std::string::npos);

    const auto unknown = m_handlers->page(true, "99");
    EXPECT_NE(unknown.body.find("no job 99 in this queue"), std::string::npos);
}

TEST_F(WebHandlersTest, AnActionTheAccessRulesRefuseIsAnsweredWithTheirStatusAndWhy)
{
    const auto id = submit("sleep 100");
    const WebAccessPolicy read_only; // no --allow-actions
    const WebRequestFacts cancel{.method = "POST",
                                 .path = fmt::format("/api/jobs/{}/cancel", id),
                                 .action = true,
                                 .reads_output = false,
                                 .host = "127.0.0.1:8787",
                                 .origin = "http://127.0.0.1:8787",
                                 .fetch_site = "same-origin",
                                 .authorization = "",
                                 .cookie = "",
                                 .query_token = ""};
    const auto decision = decide_web_access(read_only, cancel);
    const auto refused = WebHandlers::refusal(decision);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 403);
    EXPECT_EQ(refused->content_type, "application/json");
    EXPECT_EQ(body_of(*refused)["error"], decision.why);
    EXPECT_NE(decision.why.find("--allow-actions"), std::string::npos);
    // Nothing was acted on.
    EXPECT_EQ(body_of(m_handlers->job({.captured = {std::to_string(id)}}))["job"]["state"],
              "queued");

    auto read = cancel;
    read.method = "GET";
    read.path = "/api/status";
    read.action = false;
    EXPECT_FALSE(WebHandlers::refusal(decide_web_access(read_only, read)));
}

TEST_F(WebHandlersTest, AnActionIsDoneOnTheServingUsersJobsOnly)
{
    const auto mine = std::to_string(submit("sleep 100"));
    const auto theirs = std::to_string(submit("sleep 100", "", "bob", k_bob));

    const auto refused = m_handlers->job_action({.captured = {theirs, "cancel"}});
    EXPECT_EQ(refused.status, 403);
    EXPECT_EQ(body_of(refused)["error"],
              fmt::format("job {} is bob's: only alice's own jobs are acted on here", theirs));

    const auto cancelled = m_handlers->job_action({.captured = {mine, "cancel"}});
    EXPECT_EQ(cancelled.status, 200);
    EXPECT_EQ(body_of(cancelled)["done"], fmt::format("job {} cancelled", mine));
    EXPECT_EQ(m_handlers->job_action({.captured = {mine, "cancel"}}).status, 409);

    const auto retried = m_handlers->job_action({.captured = {mine, "retry"}});
    EXPECT_EQ(retried.status, 200);
    EXPECT_EQ(body_of(retried)["done"], fmt::format("job {} queued again", mine));

    EXPECT_EQ(m_handlers->job_action({.captured = {"99", "cancel"}}).status, 404);
}

TEST_F(WebHandlersTest, APauseAndAResumeSayWhatTheyDid)
{
    const auto paused = m_handlers->pause_queue({.captured = {"pause"}, .query = {{"gpu", "1"}}});
    EXPECT_EQ(paused.status, 200);
    EXPECT_EQ(body_of(paused)["done"], "paused GPU 1");
    EXPECT_EQ(m_queue->paused(), (std::set<std::string>{"1"}));

    const auto resumed = m_handlers->pause_queue({.captured = {"resume"}});
    EXPECT_EQ(body_of(resumed)["done"], "resumed the queue");
    EXPECT_TRUE(m_queue->paused().empty());

    const auto unknown = m_handlers->stop_worker({.captured = {"nobody"}});
    EXPECT_EQ(unknown.status, 404);
    EXPECT_EQ(body_of(unknown)["error"], "no worker nobody serves this queue");
}

TEST(WebHandlers, AServerWithNoQueueSaysSoAndWhatWasThrownFailsTheOneRequest)
{
    LiveState state{LiveSources{}};
    const FixedTime time;
    WebHandlers handlers(state, time);
    const auto job = handlers.job({.captured = {"1"}});
    EXPECT_EQ(job.status, 404);
    EXPECT_EQ(body_of(job)["error"], "this server shows no queue");
    EXPECT_EQ(handlers.job_output({.captured = {"1"}}).status, 404);
    EXPECT_EQ(handlers.job_action({.captured = {"1", "cancel"}}).status, 404);

    const auto thrown =
        WebHandlers::thrown(std::make_exception_ptr(std::runtime_error("database is locked")));
    EXPECT_EQ(thrown.status, 503);
    EXPECT_EQ(body_of(thrown)["error"], "database is locked");
    EXPECT_EQ(WebHandlers::thrown(std::make_exception_ptr(7)).status, 500);

    const auto unrouted = WebHandlers::unrouted(404, "/nope");
    EXPECT_EQ(body_of(unrouted)["error"], "nothing here at /nope");
    EXPECT_EQ(body_of(WebHandlers::unrouted(400, "/"))["error"], "the request could not be read");
}

} // namespace
} // namespace gpusched::web
