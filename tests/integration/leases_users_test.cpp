// Two users' runs share a machine, and nothing in the file system is the lease: removing the
// lock directory or its files, as `rm -rf` or a cleaner of old files in /tmp would, or
// planting files there, changes nobody's GPUs, and `status` names holders as the kernel does.
#include "leases_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <csignal>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

TEST_F(LeasesOfTwoUsers, RemovingRecordsOrTheirDirectoryEndsNoLease)
{
    Process first(m_dir, {{"--gpus", "0"},
                          join_lines({marked_job(1, "first"), job(0.5, "first"),
                                      marked_job(0.3, "first-again")})});
    ASSERT_TRUE(eventually([&] { return started("first"); }));
    ASSERT_TRUE(eventually([&] { return fs::exists(leases() + "/0.record"); }));
    fs::remove(leases() + "/0.record"); // as a cleaner of old files in /tmp does
    TempDir other;
    Process second(other, as_user(*m_user, sharing({"--gpus", "0"}, job(0.1, "second") + "\n")));
    ASSERT_TRUE(eventually([&] { return started("first-again"); }));
    fs::remove_all(leases()); // rm -rf
    TempDir third;
    Process exec(third, sharing({"exec", "--gpus", "0", "--", "sh", "-c", job(0.1, "exec")}));

    const auto first_done = first.wait();
    EXPECT_EQ(first_done.exit_status, 0) << first_done.err;
    EXPECT_EQ(first_done.err.find("error"), std::string::npos) << first_done.err;
    const auto second_done = second.wait();
    EXPECT_EQ(second_done.exit_status, 0) << second_done.err;
    EXPECT_NE(second_done.err.find("waiting for GPU 0: it is leased by root (pid "),
              std::string::npos)
        << "the kernel names the holder, record or not:\n"
        << second_done.err;
    EXPECT_EQ(exec.wait().exit_status, 0);
    EXPECT_EQ(records().size(), 5u);
    EXPECT_EQ(overlaps(records()), "");
}

TEST_F(LeasesOfTwoUsers, PlantedRecordsNeitherBlockNorHijack)
{
    fs::create_directory(leases());
    fs::permissions(leases(), fs::perms::all | fs::perms::sticky_bit);
    write_file(m_dir / "victim", "precious\n");
    write_planted_record();
    as_second_user(fmt::format("cp {0} {1}/0.record && chmod 644 {1}/0.record && "
                               "ln -s {2} {1}/1.record && mkfifo {1}/2.record",
                               (m_dir / "planted").string(), leases(),
                               (m_dir / "victim").string()));
    // Long enough for a sanitized `status` to find all three held at once.
    Process first(m_dir, {{"--gpus", "0,1,2"},
                          join_lines({marked_job(4, "first"), marked_job(4, "first"),
                                      marked_job(4, "first")})});
    ASSERT_TRUE(eventually([&] { return started("first"); }));
    ASSERT_TRUE(eventually([&] {
        const auto all = status({"0", "1", "2"});
        return std::all_of(all.begin(), all.end(), [&](const nlohmann::json& gpu) {
            return gpu["state"] == "leased" && gpu["holder"].is_object() &&
                   gpu["holder"]["pid"] == first.pid();
        });
    }));
    TempDir other;
    const auto second =
        run(other, as_user(*m_user, sharing({"--gpus", "2,1,0"},
                                            join_lines({job(0.1, "second"), job(0.1, "second")}))));
    EXPECT_EQ(second.exit_status, 0) << second.err;
    const auto first_done = first.wait();
    EXPECT_EQ(first_done.exit_status, 0) << first_done.err;
    EXPECT_NE(first_done.err.find("1.record is a symbolic link"), std::string::npos)
        << first_done.err;
    EXPECT_EQ(read_file(m_dir / "victim"), "precious\n");
    EXPECT_EQ(records().size(), 5u);
    EXPECT_EQ(overlaps(records()), "");
}

TEST_F(LeasesOfTwoUsers, StatusNamesTheHolderWhateverTheRecordsSay)
{
    Process holder(
        m_dir, {{"--gpus", "0,1"}, join_lines({marked_job(30, "held"), marked_job(30, "held")})});
    ASSERT_TRUE(eventually(
        [&] { return fs::exists(leases() + "/0.record") && fs::exists(leases() + "/1.record"); }));
    fs::remove(leases() + "/0.record");
    // Record files are open to every user: anyone may write one that lies.
    write_planted_record();
    as_second_user(fmt::format("cat {} > {}/1.record", (m_dir / "planted").string(), leases()));
    const auto shown = status({"0", "1"});
    ASSERT_EQ(shown.size(), 2u);
    for (const auto& gpu : shown) {
        EXPECT_EQ(gpu["state"], "leased") << gpu;
        EXPECT_EQ(gpu["holder"]["pid"], holder.pid()) << gpu;
        EXPECT_EQ(gpu["holder"]["uid"], 0) << gpu;
        EXPECT_EQ(gpu["holder"]["user"], "root") << gpu;
        EXPECT_TRUE(gpu["record"]["jobs"].empty()) << "no job of a record that is not the holder's";
    }
    EXPECT_EQ(shown[0]["record"]["check"], "missing");
    EXPECT_EQ(shown[1]["record"]["check"], "foreign");

    const auto table = run(m_dir, {{"status", "--gpus", "0,1"}});
    EXPECT_NE(
        table.out.find(fmt::format("{:<10} {:>8}  {:<19}  (no record)", "root", holder.pid(), "")),
        std::string::npos)
        << table.out;
    EXPECT_EQ(table.out.find("planted"), std::string::npos) << table.out;
    holder.signal(SIGTERM);
    holder.wait();
}

TEST_F(LeasesOfTwoUsers, AKilledSchedulersJobKeepsItsLeaseWithoutAnyFile)
{
    // The run guard stops the jobs of a killed scheduler; this one ignores SIGTERM, so it
    // runs on to its end, and holds GPU 0 all that time.
    // Long enough to outlast a slow (sanitized, loaded) `status` below.
    Process killed(m_dir, {{"--gpus", "0"}, "trap '' TERM; " + marked_job(5, "orphan") + "\n"});
    ASSERT_TRUE(eventually([&] { return started("orphan"); }));
    killed.signal(SIGKILL);
    killed.wait();
    fs::remove_all(leases());
    const auto shown = status({"0"});
    ASSERT_EQ(shown.size(), 1u);
    ASSERT_EQ(shown[0]["state"], "leased");
    ASSERT_TRUE(shown[0]["holder"].is_object());
    EXPECT_EQ(shown[0]["holder"]["pid"], killed.pid()) << "the kernel remembers who took it";
    TempDir other;
    const auto next =
        run(other,
            as_user(*m_user, sharing({"exec", "--gpus", "0", "--", "sh", "-c", job(0.1, "next")})));
    EXPECT_EQ(next.exit_status, 0) << next.err;
    ASSERT_TRUE(eventually([&] { return recorded(2); }));
    EXPECT_EQ(overlaps(records()), "") << "the orphaned job still held GPU 0";
}

} // namespace
} // namespace gpusched::testing
