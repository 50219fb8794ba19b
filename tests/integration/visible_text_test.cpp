// Another user's text on your terminal: their commands, names and directories reach `status`,
// `queue`, `wait`, `logs` and the logs with what would act on a terminal (a new window title,
// a cleared screen, a bell) shown as escapes; `--json` keeps the exact bytes.
#include "leases_fixture.hpp"
#include "queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace gpusched::testing {
namespace {

namespace fs = std::filesystem;

// Retitles the window (OSC 0, ended by BEL), clears the screen, rings the bell.
constexpr std::string_view k_hostile = "\033]0;pwned\007\033[2J\a";
constexpr std::string_view k_shown = "\\e]0;pwned\\a\\e[2J\\a";

// Empty when `text` holds no ESC and no BEL; else the text, to show what leaked.
std::string raw_controls_in(const std::string& text)
{
    return text.find_first_of("\033\007") == std::string::npos ? "" : text;
}

bool holds(const std::string& text, std::string_view part)
{
    return text.find(part) != std::string::npos;
}

TEST_F(LeasesOfTwoUsers, AnotherUsersCommandIsShownByStatusWithItsControlsVisible)
{
    // The job holds GPU 0 until the test lets it go.
    const auto release = m_dir / "release";
    const auto command =
        fmt::format(": '{}'; touch {}; while [ ! -e {} ]; do sleep 0.05; done", k_hostile,
                    (m_dir / "started-held").string(), release.string());
    TempDir other;
    Process holder(other, as_user(*m_user, sharing({"--gpus", "0"}, command + "\n")));
    ASSERT_TRUE(eventually([&] { return started("held"); }));
    ASSERT_TRUE(eventually([&] {
        const auto shown = run(m_dir, sharing({"status", "--json", "--gpus", "0"}));
        const auto gpus = json_field(shown.out, "gpus");
        return gpus.is_array() && gpus.size() == 1 && gpus[0]["record"].is_object() &&
               gpus[0]["record"]["jobs"].size() == 1;
    }));

    const auto json = run(m_dir, sharing({"status", "--json", "--gpus", "0"}));
    EXPECT_EQ(json.exit_status, 0) << json.err;
    const auto gpus = json_field(json.out, "gpus");
    ASSERT_EQ(gpus.size(), 1u) << json.out;
    EXPECT_EQ(gpus[0]["record"]["jobs"][0]["command"].get<std::string>().substr(0, 40),
              command.substr(0, 40))
        << "JSON keeps the exact text";

    const auto table = run(m_dir, sharing({"status", "--gpus", "0"}));
    EXPECT_EQ(table.exit_status, 0) << table.err;
    EXPECT_EQ(raw_controls_in(table.out), "");
    EXPECT_TRUE(holds(table.out, fmt::format(": '{}'; touch ", k_shown))) << table.out;
    EXPECT_TRUE(holds(table.out, *m_user)) << table.out;

    write_file(release, "");
    const auto done = holder.wait();
    EXPECT_EQ(done.exit_status, 0) << done.err;
    // The holder's own log names the job it ran, as a worker's log names others' jobs.
    EXPECT_EQ(raw_controls_in(done.err), "");
}

class VisibleQueueText : public ::testing::TestWithParam<Store>, public QueueFixture {
protected:
    VisibleQueueText() : QueueFixture(GetParam()) {}
};

TEST_P(VisibleQueueText, CommandsAndDirectoriesAreShownWithTheirControlsVisible)
{
    // A directory's name is its maker's to choose, as much as a command is.
    const auto directory = m_dir / fmt::format("in{}here", k_hostile);
    fs::create_directory(directory);
    const auto command = fmt::format(": '{}'; exit 3", k_hostile);
    auto submitted = submit(command + "\n", {"--name", "hostile"});
    submitted.cwd = directory;
    ASSERT_EQ(run(m_dir, submitted).exit_status, 0);

    const auto listed = gpusched("queue");
    EXPECT_EQ(listed.exit_status, 0) << listed.err;
    EXPECT_EQ(raw_controls_in(listed.out), "");
    EXPECT_TRUE(holds(listed.out, fmt::format("job 1 [hostile] in {}", (m_dir / "in").string())))
        << listed.out;
    EXPECT_TRUE(holds(listed.out, fmt::format("in{}here (", k_shown))) << listed.out;
    EXPECT_TRUE(holds(listed.out, fmt::format(": : '{}'; exit 3", k_shown))) << listed.out;
    const auto next = queue_status()["next"];
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0]["command"], command) << "JSON keeps the exact text";
    EXPECT_EQ(next[0]["directory"], directory.string());

    start_worker("0");
    const auto waited = gpusched("wait", {"1"});
    EXPECT_EQ(waited.exit_status, 1) << waited.err;
    EXPECT_EQ(raw_controls_in(waited.err), "");
    EXPECT_TRUE(holds(waited.err, fmt::format("exit 3 after")) &&
                holds(waited.err, fmt::format(": : '{}'; exit 3", k_shown)))
        << waited.err;
    ASSERT_TRUE(eventually([&] { return holds(worker_err(0), "job 1 failed on GPU"); }))
        << worker_err(0);
    EXPECT_EQ(raw_controls_in(worker_err(0)), "");
    EXPECT_TRUE(holds(worker_err(0), k_shown)) << worker_err(0);

    const auto ended = gpusched("queue");
    EXPECT_EQ(raw_controls_in(ended.out), "");
    EXPECT_TRUE(holds(ended.out, fmt::format("exit 3: : '{}'; exit 3", k_shown))) << ended.out;
    const auto logs = gpusched("logs", {"1"});
    EXPECT_EQ(logs.exit_status, 0) << logs.err;
    EXPECT_EQ(raw_controls_in(logs.err), "");
    EXPECT_TRUE(holds(logs.err, fmt::format("in{}here", k_shown))) << logs.err;
}

INSTANTIATE_TEST_SUITE_P(Stores, VisibleQueueText, ::testing::Values(Store::sqlite, Store::redis),
                         store_name);

} // namespace
} // namespace gpusched::testing
