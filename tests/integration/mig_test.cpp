// MIG against the fake driver: GPU 0 (nvidia-smi's) has its MIG mode enabled and two MIG
// instances, GPU 1 is whole. Discovery lists the instances through NVML, jobs get them as
// CUDA_VISIBLE_DEVICES=MIG-<uuid>, and the host-wide leases keep a MIG instance and its GPU
// apart while letting the GPU's instances run side by side, across processes.
#include "fake_driver_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <thread>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

const std::string k_first_mig = "MIG-11111111-aaaa-bbbb-cccc-dddddddddddd";
const std::string k_second_mig = "MIG-22222222-aaaa-bbbb-cccc-dddddddddddd";
// The instances lie on the gpu line of nvidia-smi's GPU 0 (k_line_of_gpu_0).
const std::string k_mig_machine =
    k_old_driver + fmt::format("mig {0} {1} 1 0 40192 0 Fake H100 MIG 3g.40gb\n"
                               "mig {0} {2} 2 0 40192 512 Fake H100 MIG 3g.40gb\n",
                               k_line_of_gpu_0, k_first_mig, k_second_mig);

class FakeMig : public FakeOldDriver {
protected:
    void SetUp() override
    {
        FakeOldDriver::SetUp();
        if (!IsSkipped()) {
            machine(k_mig_machine);
        }
    }

    // `gpusched exec` holding `gpus` (exec's arguments before the command) until release(tag).
    std::unique_ptr<Process> hold(std::vector<std::string> gpus, const std::string& tag) const
    {
        std::vector<std::string> args{"exec"};
        args.insert(args.end(), gpus.begin(), gpus.end());
        args.insert(args.end(), {"--", "sh", "-c",
                                 fmt::format("echo $CUDA_VISIBLE_DEVICES > {0}.started; "
                                             "while [ ! -e {0}.go ]; do sleep 0.05; done",
                                             (m_dir / tag).string())});
        auto holder = std::make_unique<Process>(m_dir, on_fake(args));
        EXPECT_TRUE(eventually([&] { return fs::exists(m_dir / (tag + ".started")); }))
            << holder->err_so_far();
        return holder;
    }
    void release(const std::string& tag, Process& holder) const
    {
        write_file(m_dir / (tag + ".go"), "");
        const auto result = holder.wait();
        EXPECT_EQ(result.exit_status, 0) << result.err;
    }
    // `gpusched exec --no-wait` on GPU `id`: 0 when its lease was free, 75 when not.
    int try_exec(const std::string& id) const
    {
        TempDir other;
        const auto result = run(other, on_fake({"exec", "--gpus", id, "--no-wait", "--", "true"}));
        return result.exit_status;
    }
};

TEST_F(FakeMig, GpusListsTheMigInstancesOfAGpuWithMigEnabledInItsPlace)
{
    const auto gpus = listed_gpus();
    ASSERT_TRUE(gpus.is_array() && gpus.size() == 3) << gpus.dump();
    for (int i = 0; i < 2; ++i) {
        const auto& mig = gpus[static_cast<std::size_t>(i)];
        SCOPED_TRACE(mig.dump());
        EXPECT_EQ(mig["id"], i == 0 ? k_first_mig : k_second_mig);
        EXPECT_EQ(mig["uuid"], mig["id"]);
        EXPECT_EQ(mig["name"], "Fake H100 MIG 3g.40gb");
        EXPECT_EQ(mig["memory_total_mib"], 40192);
        EXPECT_EQ(mig["memory_used_mib"], i == 0 ? 0 : 512) << "NVML answers for the instance";
        EXPECT_EQ(mig["mig"]["parent_index"], 0);
        EXPECT_EQ(mig["mig"]["parent_uuid"], k_first_uuid);
        EXPECT_EQ(mig["mig"]["device"], i);
        EXPECT_EQ(mig["mig"]["gpu_instance"], i + 1);
        EXPECT_EQ(mig["mig"]["compute_instance"], 0);
    }
    EXPECT_EQ(gpus[2]["uuid"], k_second_uuid);
    EXPECT_EQ(gpus[2]["mig"]["mode"], "disabled");

    const auto whole = run(m_dir, on_fake({"gpus", "--gpus", "0", "--json"}));
    ASSERT_EQ(whole.exit_status, 0) << whole.err;
    const auto gpu = json_field(whole.out, "gpus");
    ASSERT_TRUE(gpu.is_array() && gpu.size() == 1) << whole.out;
    EXPECT_EQ(gpu[0]["uuid"], k_first_uuid);
    EXPECT_EQ(gpu[0]["mig"]["mode"], "enabled");

    const auto table = run(m_dir, on_fake({"gpus"}));
    ASSERT_EQ(table.exit_status, 0) << table.err;
    EXPECT_NE(table.out.find(k_second_mig), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("GPU 0 device 1 (GI 2, CI 0)"), std::string::npos) << table.out;
}

TEST_F(FakeMig, JobsOnAMigInstanceGetItsUuidAsCudaVisibleDevices)
{
    // Without --gpus: the two instances and GPU 1.
    const auto every = run(m_dir, on_fake({}, note_gpus() + note_gpus() + note_gpus()));
    EXPECT_EQ(every.exit_status, 0) << every.err;
    auto gpus = seen();
    std::sort(gpus.begin(), gpus.end());
    EXPECT_EQ(gpus, (std::vector<std::string>{"1", k_first_mig, k_second_mig}));

    // Named by the start of its UUID, as CUDA takes it: passed on as written.
    fs::remove(m_dir / "seen");
    const auto named = run(m_dir, on_fake({"--gpus", "MIG-22222222"}, note_gpus()));
    EXPECT_EQ(named.exit_status, 0) << named.err;
    EXPECT_EQ(seen(), std::vector<std::string>{"MIG-22222222"});
}

TEST_F(FakeMig, ARunWantingAMigInstanceWaitsWhileItsGpuIsLeasedWhole)
{
    auto holder = hold({"--gpus", "0"}, "whole");
    EXPECT_EQ(try_exec(k_first_mig), 75) << "a MIG instance of a GPU leased whole";
    EXPECT_EQ(try_exec("MIG-GPU-" + k_first_uuid.substr(4) + "/1/0"), 75)
        << "the same instance in the form of drivers before R470";
    EXPECT_EQ(try_exec("1"), 0) << "another GPU";

    TempDir other;
    Process waiting(other, on_fake({"--gpus", k_second_mig}, note_gpus()));
    ASSERT_TRUE(eventually([&] {
        return waiting.err_so_far().find("its GPU " + k_first_uuid + " is leased by") !=
               std::string::npos;
    })) << waiting.err_so_far();
    EXPECT_TRUE(seen().empty()) << "a job ran on a MIG instance of a GPU leased whole";
    release("whole", *holder);
    const auto result = waiting.wait();
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(seen(), std::vector<std::string>{k_second_mig});
}

TEST_F(FakeMig, ARunWantingTheWholeGpuWaitsWhileAMigInstanceOfItIsLeased)
{
    auto holder = hold({"--gpus", k_first_mig}, "instance");
    EXPECT_EQ(try_exec("0"), 75) << "GPU 0 by its index";
    EXPECT_EQ(try_exec(k_first_uuid), 75) << "GPU 0 by its UUID, without asking the probe";
    EXPECT_EQ(try_exec("GPU-aaaaaaaa"), 75) << "GPU 0 by the start of its UUID";
    EXPECT_EQ(try_exec("1"), 0) << "another GPU";

    const auto status = run(m_dir, on_fake({"status", "--json"}));
    ASSERT_EQ(status.exit_status, 0) << status.err;
    const auto shown = json_field(status.out, "gpus");
    ASSERT_TRUE(shown.is_array()) << status.out;
    bool gpu_shown = false;
    bool instance_shown = false;
    for (const auto& entry : shown) {
        if (entry["id"] == "0") {
            gpu_shown = true;
            EXPECT_EQ(entry["state"], "free") << entry.dump();
            EXPECT_EQ(entry["mig_instances_leased"], 1) << entry.dump();
        } else if (entry["key"] == k_first_mig) {
            instance_shown = true;
            EXPECT_EQ(entry["state"], "leased") << entry.dump();
        }
    }
    EXPECT_TRUE(gpu_shown && instance_shown) << status.out;

    TempDir other;
    Process waiting(other, on_fake({"--gpus", "0"}, note_gpus()));
    ASSERT_TRUE(eventually([&] {
        return waiting.err_so_far().find("a MIG instance of it is leased by") != std::string::npos;
    })) << waiting.err_so_far();
    EXPECT_TRUE(seen().empty()) << "a job ran on a GPU whose MIG instance is leased";
    release("instance", *holder);
    const auto result = waiting.wait();
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(seen(), std::vector<std::string>{"0"});
}

TEST_F(FakeMig, TwoMigInstancesOfOneGpuRunAtOnceAndKeepTheGpuUntilBothEnd)
{
    auto first = hold({"--gpus", k_first_mig}, "first");
    auto second = hold({"--gpus", k_second_mig}, "second");
    EXPECT_EQ(read_file(m_dir / "first.started"), k_first_mig + "\n");
    EXPECT_EQ(read_file(m_dir / "second.started"), k_second_mig + "\n");
    EXPECT_EQ(try_exec("0"), 75);
    release("first", *first);
    EXPECT_EQ(try_exec("0"), 75) << "the second instance still runs";
    release("second", *second);
    EXPECT_EQ(try_exec("0"), 0) << "both instances' leases ended with their holders";
}

TEST_F(FakeMig, AGpuschedInsideAJobOnAMigInstanceRunsThereAtOnce)
{
    // The job inherits the instance's lease and its share of the GPU: the inner gpusched finds
    // both its own, and neither waits for itself.
    const auto inner = fmt::format("{} exec --gpus $CUDA_VISIBLE_DEVICES --no-wait -- sh -c "
                                   "'echo $CUDA_VISIBLE_DEVICES >> {}'\n",
                                   binary().string(), (m_dir / "seen").string());
    const auto result = run(m_dir, on_fake({"--gpus", k_first_mig}, inner));
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(seen(), std::vector<std::string>{k_first_mig});
}

// A MIG instance is a GPU with its own memory: --mem packs jobs on it by the instance's
// 40192 MiB, not by its GPU's 81559, and its jobs get the instance.
TEST_F(FakeMig, JobsThatAskForMemoryShareAMigInstanceByItsOwnMemory)
{
    const auto log = m_dir / "log";
    const auto go = m_dir / "go";
    std::string input;
    for (int job = 1; job <= 3; ++job) {
        input += fmt::format("echo start $CUDA_VISIBLE_DEVICES >> {0}; "
                             "while [ ! -e {1} ]; do sleep 0.05; done; echo end >> {0}\n",
                             log.string(), go.string());
    }
    const auto starts = [&] {
        const auto lines =
            fs::exists(log) ? split_lines(read_file(log)) : std::vector<std::string>{};
        return std::count_if(lines.begin(), lines.end(),
                             [](const auto& line) { return line.starts_with("start"); });
    };
    // 15 GiB each: two fit in the instance's 40192 MiB, a third does not (five would fit in
    // the whole GPU's).
    Process gpusched(m_dir, on_fake({"--gpus", k_first_mig, "--mem", "15G", "-v"}, input));
    ASSERT_TRUE(eventually([&] { return starts() == 2; })) << gpusched.err_so_far();
    std::this_thread::sleep_for(1500ms); // several looks at the memory, with room for none
    EXPECT_EQ(starts(), 2) << "a third job of 15 GiB started on a 40192 MiB instance";
    EXPECT_EQ(try_exec("0"), 75) << "the instance's GPU is not free while its jobs run";
    write_file(go, "");
    const auto result = gpusched.wait();
    EXPECT_EQ(result.exit_status, 0) << result.err;
    for (const auto& line : split_lines(read_file(log))) {
        EXPECT_TRUE(line == "end" || line == "start " + k_first_mig) << line;
    }
    EXPECT_EQ(starts(), 3);
}

} // namespace
} // namespace gpusched::testing
