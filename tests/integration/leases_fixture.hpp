// The fixtures of the lease tests: each test has its own lock directory, shared by the
// processes it starts.
#pragma once

#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::testing {

class Leases : public ::testing::Test {
protected:
    void SetUp() override { adopt_orphans(); }

    std::string leases() const { return (m_dir / "leases").string(); }
    // Options for a gpusched with its own stdout and stderr in another directory, sharing
    // this test's lock directory.
    LaunchOptions sharing(std::vector<std::string> args,
                          std::optional<std::string> input = {}) const
    {
        return {std::move(args), std::move(input), {}, {{"GPUSCHED_LOCK_DIR", leases()}}};
    }
    std::vector<JobRecord> records() const { return read_records(m_dir / "runs.log"); }
    std::string job(double seconds, const std::string& tag) const
    {
        return record_command(m_dir, seconds, tag);
    }
    bool recorded(std::size_t count) const
    {
        return fs::exists(m_dir / "runs.log") && records().size() >= count;
    }
    // Jobs write their start when they start and the record when they end; this file tells a
    // test that job TAG has started.
    std::string marked_job(double seconds, const std::string& tag) const
    {
        return fmt::format("touch {}/started-{}; {}", m_dir.path().string(), tag,
                           job(seconds, tag));
    }
    bool started(const std::string& tag) const { return fs::exists(m_dir / ("started-" + tag)); }
    // A run's commands: `count` jobs of `seconds`, the first marked when it starts.
    std::string sweep(int count, double seconds, const std::string& tag) const
    {
        std::vector<std::string> lines = {marked_job(seconds, tag)};
        for (int i = 1; i < count; ++i) {
            lines.push_back(job(seconds, tag));
        }
        return join_lines(lines);
    }

    TempDir m_dir;
};

// Two users share the machine: the tests' own, and a second one that runs gpusched through
// runuser. Skipped where the tests do not run as root.
class LeasesOfTwoUsers : public Leases {
protected:
    void SetUp() override
    {
        Leases::SetUp();
        m_user = second_user();
        if (!m_user) {
            GTEST_SKIP() << "needs root, to run gpusched as a second user";
        }
        // Their jobs append to the test's record of runs, whoever writes it first.
        open_to_everyone(m_dir.path());
        write_file(m_dir / "runs.log", "");
        fs::permissions(m_dir / "runs.log", fs::perms::owner_read | fs::perms::owner_write |
                                                fs::perms::group_read | fs::perms::group_write |
                                                fs::perms::others_read | fs::perms::others_write);
    }
    // Runs `script` with sh as the second user.
    void as_second_user(const std::string& script) const
    {
        const auto command = fmt::format("runuser -u {} -- sh -c '{}'", *m_user, script);
        ASSERT_EQ(std::system(command.c_str()), 0) << command;
    }
    // A record that names root and pid 1 with a job of its own, for the second user to plant.
    void write_planted_record() const
    {
        write_file(m_dir / "planted", R"({"user":"root","uid":0,"gpusched_pid":1,)"
                                      R"("jobs":[{"pid":1,"since":0,"command":"planted"}]})"
                                      "\n");
    }
    // The GPUs of `gpusched status --json --gpus GPUS`, as the second user sees them.
    nlohmann::json status(const std::vector<std::string>& gpus) const
    {
        std::vector<std::string> args = {"status", "--json", "--gpus"};
        args.insert(args.end(), gpus.begin(), gpus.end());
        TempDir other;
        const auto shown = run(other, as_user(*m_user, sharing(args)));
        EXPECT_EQ(shown.exit_status, 0) << shown.err;
        return json_field(shown.out, "gpus");
    }

    std::optional<std::string> m_user;
};

} // namespace gpusched::testing
